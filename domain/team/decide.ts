import type { DomainEvent } from '../shared/events.js';
import { invalidField, missingField, notFound } from '../shared/errors.js';
import type { Scope, TeamState } from './events.js';

const SCOPES: readonly Scope[] = ['read_write', 'read_only'];

function requireName(name: unknown, max: number): string {
  if (name === undefined) throw missingField('name');
  if (typeof name !== 'string' || name.trim() === '') throw invalidField('name', 'name must be a non-empty string.');
  if (name.length > max) throw invalidField('name', `name must be at most ${max} characters.`);
  return name.trim();
}

export function decideCreateTeam(cmd: { id: number; name: unknown }, state: TeamState): DomainEvent[] {
  if (state.exists) throw new Error(`team ${cmd.id} exists`);
  return [{ type: 'TeamCreated', data: { id: cmd.id, name: requireName(cmd.name, 150) } }];
}

export function decideIssueKey(
  cmd: { keyId: number; name: unknown; scope: unknown; prefix: string; hash: string },
  state: TeamState,
): DomainEvent[] {
  if (!state.exists) throw notFound('team', state.id);
  const name = requireName(cmd.name, 100);
  if (cmd.scope === undefined) throw missingField('scope');
  if (!SCOPES.includes(cmd.scope as Scope)) throw invalidField('scope', 'scope must be "read_write" or "read_only".');
  return [{ type: 'ApiKeyIssued', data: { keyId: cmd.keyId, name, scope: cmd.scope, prefix: cmd.prefix, hash: cmd.hash } }];
}

/** Revoking is idempotent: a revoked key stays revoked and nothing more is recorded. */
export function decideRevokeKey(cmd: { keyId: number }, state: TeamState): DomainEvent[] {
  const key = state.keys.get(cmd.keyId);
  if (!key) throw notFound('API key', cmd.keyId);
  return key.revoked ? [] : [{ type: 'ApiKeyRevoked', data: { keyId: cmd.keyId } }];
}

import { invalidField, missingField, notFound } from '../shared/errors.js';
import type { Scope, TeamEvent, TeamState } from './events.js';

const SCOPES: readonly Scope[] = ['read_write', 'read_only'];
const isScope = (s: unknown): s is Scope => SCOPES.includes(s as Scope);

function requireName(name: unknown, max: number): string {
  if (name === undefined) throw missingField('name');
  if (typeof name !== 'string' || name.trim() === '') throw invalidField('name', 'name must be a non-empty string.');
  if (name.length > max) throw invalidField('name', `name must be at most ${max} characters.`);
  return name.trim();
}

export function decideCreateTeam(cmd: { id: number; name: unknown }, state: TeamState): TeamEvent[] {
  if (state.exists) throw new Error(`team ${cmd.id} exists`);
  return [{ type: 'TeamCreated', data: { id: cmd.id, name: requireName(cmd.name, 150) } }];
}

export function decideIssueKey(
  cmd: { keyId: number; name: unknown; scope: unknown; prefix: string; hash: string },
  state: TeamState,
): TeamEvent[] {
  if (!state.exists) throw notFound('team', state.id);
  const name = requireName(cmd.name, 100);
  if (cmd.scope === undefined) throw missingField('scope');
  if (!isScope(cmd.scope)) throw invalidField('scope', 'scope must be "read_write" or "read_only".');
  return [{ type: 'ApiKeyIssued', data: { keyId: cmd.keyId, name, scope: cmd.scope, prefix: cmd.prefix, hash: cmd.hash } }];
}

/** Revoking is idempotent: a revoked key stays revoked and nothing more is recorded. */
export function decideRevokeKey(cmd: { keyId: number }, state: TeamState): TeamEvent[] {
  const key = state.keys.get(cmd.keyId);
  if (!key) throw notFound('API key', cmd.keyId);
  return key.revoked ? [] : [{ type: 'ApiKeyRevoked', data: { keyId: cmd.keyId } }];
}

import { invalidField, missingField, notFound, unknownField } from '../shared/errors.js';
import { parseEmail } from '../shared/values.js';
import type { Scope, TeamEvent, TeamSettings, TeamState } from './events.js';

const SCOPES: readonly Scope[] = ['read_write', 'read_only'];
const isScope = (s: unknown): s is Scope => SCOPES.includes(s as Scope);

function requireName(name: unknown, max: number): string {
  if (name === undefined) throw missingField('name');
  if (typeof name !== 'string' || name.trim() === '') throw invalidField('name', 'name must be a non-empty string.');
  if (name.length > max) throw invalidField('name', `name must be at most ${max} characters.`);
  return name.trim();
}

/** Optional; null (or absent) for none. */
function alertEmailOf(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const email = typeof value === 'string' ? parseEmail(value) : null;
  if (email === null) throw invalidField('alertEmail', 'alertEmail must be a valid email address, like ops@example.org, or null.');
  return email;
}

export interface TeamInput {
  name?: unknown;
  alertEmail?: unknown;
}

export function decideCreateTeam(cmd: { id: number; input: TeamInput }, state: TeamState): TeamEvent[] {
  if (state.exists) throw new Error(`team ${cmd.id} exists`);
  const name = requireName(cmd.input.name, 150);
  const alertEmail = alertEmailOf(cmd.input.alertEmail);
  return [{ type: 'TeamCreated', data: { id: cmd.id, name, alertEmail } }];
}

const UPDATABLE = ['name', 'alertEmail'];

/** decisions.md 9: `PATCH /teams/:teamId {name?, alertEmail?}`; only what changes is recorded. */
export function decideUpdateTeam(cmd: { id: number; input: TeamInput }, state: TeamState): TeamEvent[] {
  for (const k of Object.keys(cmd.input)) if (!UPDATABLE.includes(k)) throw unknownField(k);
  const changes: Partial<TeamSettings> = {};
  if (cmd.input.name !== undefined) {
    const name = requireName(cmd.input.name, 150);
    if (name !== state.name) changes.name = name;
  }
  if (cmd.input.alertEmail !== undefined) {
    const alertEmail = alertEmailOf(cmd.input.alertEmail);
    if (alertEmail !== state.alertEmail) changes.alertEmail = alertEmail;
  }
  if (!state.exists) throw notFound('team', cmd.id);
  return Object.keys(changes).length ? [{ type: 'TeamUpdated', data: { id: cmd.id, changes } }] : [];
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

import { type DomainEvent, type Evolver, unknownEvent } from '../shared/events.js';

/**
 * A team (an account) and its API keys. Events: TeamCreated {id, name, alertEmail?},
 * TeamUpdated {id, changes: {name?, alertEmail?}}, ApiKeyIssued {keyId, name, scope, prefix, hash},
 * ApiKeyRevoked {keyId}. `alertEmail` (decisions.md 12) is where operational alerts go, such as
 * an endpoint being disabled; teams created before it existed have none.
 * Only a hash of a key is ever stored.
 */
export type Scope = 'read_write' | 'read_only';

export type TeamEvent =
  | DomainEvent<'TeamCreated', { id: number; name: string; alertEmail?: string | null }>
  | DomainEvent<'TeamUpdated', { id: number; changes: Partial<TeamSettings> }>
  | DomainEvent<'ApiKeyIssued', { keyId: number; name: string; scope: Scope; prefix: string; hash: string }>
  | DomainEvent<'ApiKeyRevoked', { keyId: number }>;

export interface TeamSettings {
  name: string;
  alertEmail: string | null;
}

export interface ApiKeyState {
  id: number;
  name: string;
  scope: Scope;
  prefix: string;
  revoked: boolean;
}

export interface TeamState {
  exists: boolean;
  id: number;
  name: string;
  alertEmail: string | null;
  keys: Map<number, ApiKeyState>;
}

export const teamStream = (id: number) => `team-${id}`;

export const teamEvolver: Evolver<TeamState, TeamEvent> = {
  initial: () => ({ exists: false, id: 0, name: '', alertEmail: null, keys: new Map() }),
  evolve(state, e) {
    switch (e.type) {
      case 'TeamCreated':
        return { ...state, exists: true, id: e.data.id, name: e.data.name, alertEmail: e.data.alertEmail ?? null };
      case 'TeamUpdated':
        return { ...state, ...e.data.changes };
      case 'ApiKeyIssued': {
        const d = e.data;
        const keys = new Map(state.keys);
        keys.set(d.keyId, { id: d.keyId, name: d.name, scope: d.scope, prefix: d.prefix, revoked: false });
        return { ...state, keys };
      }
      case 'ApiKeyRevoked': {
        const keys = new Map(state.keys);
        const k = keys.get(e.data.keyId);
        if (k) keys.set(k.id, { ...k, revoked: true });
        return { ...state, keys };
      }
      default:
        return unknownEvent(e, state);
    }
  },
};

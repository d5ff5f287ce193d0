import type { Evolver } from '../shared/events.js';

/**
 * A team (an account) and its API keys. Events: TeamCreated {id, name},
 * ApiKeyIssued {keyId, name, scope, prefix, hash}, ApiKeyRevoked {keyId}.
 * Only a hash of a key is ever stored.
 */
export type Scope = 'read_write' | 'read_only';

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
  keys: Map<number, ApiKeyState>;
}

export const teamStream = (id: number) => `team-${id}`;

export const teamEvolver: Evolver<TeamState> = {
  initial: () => ({ exists: false, id: 0, name: '', keys: new Map() }),
  evolve(state, e) {
    const d = e.data;
    switch (e.type) {
      case 'TeamCreated':
        return { ...state, exists: true, id: d.id as number, name: d.name as string };
      case 'ApiKeyIssued': {
        const keys = new Map(state.keys);
        keys.set(d.keyId as number, { id: d.keyId as number, name: d.name as string, scope: d.scope as Scope, prefix: d.prefix as string, revoked: false });
        return { ...state, keys };
      }
      case 'ApiKeyRevoked': {
        const keys = new Map(state.keys);
        const k = keys.get(d.keyId as number);
        if (k) keys.set(k.id, { ...k, revoked: true });
        return { ...state, keys };
      }
      default:
        return state;
    }
  },
};

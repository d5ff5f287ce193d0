import { unknownEvent } from '../domain/shared/events.js';
import type { Projector } from './engine/projector.js';

export const TEAMS = 'teams';
export const API_KEYS = 'apiKeys';

export interface TeamDoc {
  id: number;
  name: string;
  alertEmail: string | null;
  createdAt: string;
}

export interface ApiKeyDoc {
  id: number;
  FkTeam: number;
  name: string;
  scope: 'read_write' | 'read_only';
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
  _hash: string;
}

/** Teams and their API keys, looked up by the key's prefix on every request. */
export const teamsProjection: Projector<'team'> = {
  name: 'teams',
  version: 2,
  collections: [
    { name: TEAMS, idField: 'id' },
    { name: API_KEYS, idField: 'id', indexes: [['prefix'], ['FkTeam']] },
  ],
  categories: ['team'],
  async apply(event, store) {
    switch (event.type) {
      // A team's creation and a key's issue come first in their record's life: one met again over
      // its document is a replay (a projector goes on from its last stored checkpoint), and must
      // not put back what later events changed (a revoked key usable again until its revocation
      // is applied again).
      case 'TeamCreated':
        await store.insertIfAbsent(TEAMS, { id: event.data.id, name: event.data.name, alertEmail: event.data.alertEmail ?? null, createdAt: event.metadata.at });
        return;
      case 'TeamUpdated': {
        const team = await store.get<TeamDoc>(TEAMS, event.data.id);
        if (team) await store.put(TEAMS, { ...team, ...event.data.changes });
        return;
      }
      case 'ApiKeyIssued': {
        const d = event.data;
        await store.insertIfAbsent(API_KEYS, {
          id: d.keyId,
          FkTeam: event.metadata.team,
          name: d.name,
          scope: d.scope,
          prefix: d.prefix,
          createdAt: event.metadata.at,
          revokedAt: null,
          _hash: d.hash,
        });
        return;
      }
      case 'ApiKeyRevoked': {
        const key = await store.get<ApiKeyDoc>(API_KEYS, event.data.keyId);
        if (key && !key.revokedAt) await store.put(API_KEYS, { ...key, revokedAt: event.metadata.at });
        return;
      }
      default:
        return unknownEvent(event, undefined);
    }
  },
};

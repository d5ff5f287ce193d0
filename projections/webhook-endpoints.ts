import { inCategory, streamIdOf } from '../domain/events.js';
import { endpointEvolver, type EndpointState } from '../domain/webhook-endpoint/events.js';
import type { Projector } from './engine/projector.js';
import { and, eq, type Query } from './store/port.js';

export const WEBHOOK_ENDPOINTS = 'webhookEndpoints';

export interface WebhookEndpointDoc {
  id: number;
  FkTeam: number;
  url: string;
  events: string[];
  active: boolean;
  description: string | null;
  maxPerSecond: number | null;
  disabledAt: string | null;
  disabledReason: EndpointState['disabledReason'];
  createdAt: string;
  /** Internal: signing secrets, newest first, never in a list answer. */
  _secrets: EndpointState['secrets'];
  _deleted: boolean;
  _activeSince?: string | null;
  _rev: number;
}

/** The team's webhook endpoints (decisions.md 9). */
export const webhookEndpointsProjection: Projector<'webhook_endpoint'> = {
  name: WEBHOOK_ENDPOINTS,
  version: 2,
  collections: [{ name: WEBHOOK_ENDPOINTS, idField: 'id', indexes: [['FkTeam']] }],
  categories: ['webhook_endpoint'],
  async apply(event, store) {
    if (!inCategory(event, 'webhook_endpoint')) return;
    const id = streamIdOf(event.stream);
    const current = await store.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, id);
    const rev = Number(event.revision);
    if (current && current._rev >= rev) return;
    if (!current && event.type !== 'WebhookEndpointCreated') return;
    const before: EndpointState = current
      ? { exists: true, deleted: current._deleted, id, team: current.FkTeam, url: current.url, events: current.events, active: current.active, description: current.description, maxPerSecond: current.maxPerSecond, disabledAt: current.disabledAt, disabledReason: current.disabledReason, activeSince: current._activeSince ?? null, secrets: current._secrets, createdAt: current.createdAt }
      : endpointEvolver.initial();
    const s = endpointEvolver.evolve(before, event);
    await store.put(WEBHOOK_ENDPOINTS, {
      id,
      FkTeam: s.team,
      url: s.url,
      events: s.events,
      active: s.active,
      description: s.description,
      maxPerSecond: s.maxPerSecond,
      disabledAt: s.disabledAt,
      disabledReason: s.disabledReason,
      createdAt: s.createdAt,
      _secrets: s.secrets,
      // Kept after a delete (hidden from the API) so the dispatcher can rebuild endpoints as of any point.
      _deleted: s.deleted,
      _activeSince: s.activeSince,
      _rev: rev,
    });
  },
};

export const endpointsOfTeam = (team: number): Query => ({
  collection: WEBHOOK_ENDPOINTS,
  filter: and(eq('FkTeam', team), eq('_deleted', false)),
  sort: [{ field: 'id', dir: 'asc' }],
});

import type { RecordedEvent } from '../domain/shared/events.js';
import { formatDateTime } from '../domain/shared/values.js';
import type { EndpointEvent } from '../domain/webhook-endpoint/events.js';
import type { Doc, ReadStore } from './store/port.js';
import { logOrder } from './log-order.js';
import { TEAMS, type TeamDoc } from './teams.js';

type EndpointDisabled = Extract<EndpointEvent, { type: 'WebhookEndpointDisabled' }>;

/**
 * decisions.md 12: an endpoint the dispatcher disabled queues an `endpoint_disabled` message to
 * the team's alertEmail, due at once. A team without one gets the entry as `skipped`, so the
 * outbox still shows what happened. The id names the disable, so a replayed event queues nothing twice.
 */
export async function endpointDisabledAlert(event: RecordedEvent<EndpointDisabled>, store: ReadStore): Promise<Doc> {
  const team = await store.get<TeamDoc>(TEAMS, event.metadata.team);
  const to = team?.alertEmail ?? null;
  const sendAt = formatDateTime(new Date(event.metadata.at));
  return {
    id: `endpoint-${event.data.id}-${Number(event.revision)}-endpoint_disabled`,
    FkTeam: event.metadata.team,
    kind: 'endpoint_disabled',
    taskId: null,
    volunteerId: null,
    endpointId: event.data.id,
    to,
    sendAt,
    status: to ? 'pending' : 'skipped',
    attempts: 0,
    error: to ? null : 'The team has no alertEmail.',
    sentAt: null,
    _dueAt: sendAt,
    _queued: logOrder(event.position),
    _constituent: null,
  };
}

import { inCategory, type LoggedEvent, streamIdOf } from '../domain/events.js';
import type { NotificationEvent } from '../domain/notification/delivery.js';
import { type Planned, planNotifications, rescheduleReminder } from '../domain/notification/schedule.js';
import { type Position, type RecordedEvent, unknownEvent } from '../domain/shared/events.js';
import type { Values } from '../domain/shared/fields.js';
import type { TaskAssigned } from '../domain/volunteer-task/events.js';
import { formatDateTime } from '../domain/shared/values.js';
import { logOrder, logOrderBefore } from './log-order.js';
import { endpointDisabledAlert } from './outbox-alerts.js';
import type { Projector } from './engine/projector.js';
import { and, type Doc, eq, type Filter, lte, type Query, type ReadStore, type SortKey } from './store/port.js';
import { VOLUNTEER_TASKS } from './volunteer-tasks.js';
import { VOLUNTEERS } from './volunteers.js';

export const NOTIFICATIONS = 'notifications';

const OUTBOX_ORDER: SortKey[] = [
  { field: 'sendAt', dir: 'asc' },
  { field: 'id', dir: 'asc' },
];

export interface NotificationDoc {
  id: string;
  FkTeam: number;
  kind: string;
  /** The task and volunteer of a confirmation or reminder; null on an endpoint_disabled alert. */
  taskId: number | null;
  volunteerId: number | null;
  /** The endpoint of an endpoint_disabled alert; null otherwise. */
  endpointId: number | null;
  to: string | null;
  sendAt: string;
  /** pending, sending, sent, canceled, failed, or skipped (the volunteer has no email address). */
  status: string;
  attempts: number;
  error: string | null;
  sentAt: string | null;
  /** When the sender should next try: sendAt, or the retry time after a refused attempt. */
  _dueAt: string;
  /** Where the event that queued it stands in the log (logOrder): what a later event cancels, moves or readdresses. */
  _queued: string;
  /**
   * The constituent the volunteer it goes to is (null: an alert): what an erasure or an e-mail
   * change finds it by, even once that volunteer record is deleted.
   */
  _constituent: number | null;
}

/**
 * The messages queued before the event at `p` (`_queued` at most the key just below its own). A
 * task's or a volunteer's event acts only on those: in the log's order every message there was,
 * but a run of events applied again (a projector goes on from its last stored checkpoint) would
 * otherwise cancel, reschedule or readdress the messages a later event of the run queued, which
 * that event, met again, does not queue twice.
 */
const queuedBefore = (p: Position): Filter => lte('_queued', logOrderBefore(p));

/** Cancels the pending messages `filter` names, those queued before `event` (queuedBefore); all of them without one (an erasure). */
async function cancelPending(store: ReadStore, filter: Filter, event?: RecordedEvent): Promise<void> {
  await store.updateWhere(NOTIFICATIONS, and(filter, eq('status', 'pending'), event && queuedBefore(event.position)), { status: 'canceled' });
}

async function onAssigned(event: RecordedEvent<TaskAssigned>, taskId: number, store: ReadStore): Promise<void> {
  const previous = event.data.previousVolunteerId;
  // A reassignment cancels the removed volunteer's queued messages (decisions.md 8).
  if (previous !== null) await cancelPending(store, and(eq('taskId', taskId), eq('volunteerId', previous)), event);
  const task = await store.get<Doc>(VOLUNTEER_TASKS, taskId);
  if (!task) return;
  const volunteerId = event.data.volunteerId;
  const volunteer = await store.get<Doc>(VOLUNTEERS, volunteerId);
  const plan = planNotifications({ taskId, revision: Number(event.revision), assignedAt: event.metadata.at, start: (task.TaskStartDateTime as string | null) ?? null });
  for (const p of plan) await queue(store, event, taskId, volunteerId, volunteer, p);
}

async function queue(store: ReadStore, event: RecordedEvent, taskId: number, volunteerId: number, volunteer: Doc | null, p: Planned): Promise<void> {
  if (await store.get(NOTIFICATIONS, p.id)) return; // a replayed event queues nothing twice
  const to = (volunteer?.Email1 as string | null | undefined) ?? null;
  const doc: NotificationDoc = {
    id: p.id,
    FkTeam: event.metadata.team,
    kind: p.kind,
    taskId,
    volunteerId,
    endpointId: null,
    to,
    sendAt: p.sendAt,
    status: to ? 'pending' : 'skipped',
    attempts: 0,
    error: to ? null : 'The volunteer has no email address.',
    sentAt: null,
    _dueAt: p.sendAt,
    _queued: logOrder(event.position),
    _constituent: (volunteer?.FkConstituent as number | undefined) ?? null,
  };
  await store.put(NOTIFICATIONS, doc as unknown as Doc);
}

async function onStartChanged(event: RecordedEvent, changes: Values, taskId: number, store: ReadStore): Promise<void> {
  const pending = await store.find<NotificationDoc>({ collection: NOTIFICATIONS, filter: and(eq('taskId', taskId), eq('status', 'pending'), eq('kind', 'task_reminder'), queuedBefore(event.position)) });
  const sendAt = rescheduleReminder(typeof changes.TaskStartDateTime === 'string' ? changes.TaskStartDateTime : null, event.metadata.at);
  for (const n of pending.items)
    await store.put(NOTIFICATIONS, (sendAt ? { ...n, sendAt, _dueAt: sendAt } : { ...n, status: 'canceled' }) as unknown as Doc);
  // An assigned task with no reminder pending (assigned inside 24 hours, or before it had a start)
  // gets one for its new start. A change that also assigns is planned by the assignment itself.
  if (pending.items.length || !sendAt || 'FkVolunteer' in changes) return;
  const task = await store.get<Doc>(VOLUNTEER_TASKS, taskId);
  const volunteerId = (task?.FkVolunteer as number | null | undefined) ?? null;
  if (volunteerId === null) return;
  const volunteer = await store.get<Doc>(VOLUNTEERS, volunteerId);
  const p: Planned = { id: `${taskId}-${Number(event.revision)}-task_reminder`, kind: 'task_reminder', sendAt };
  await queue(store, event, taskId, volunteerId, volunteer, p);
}

async function onDelivery(event: RecordedEvent<NotificationEvent>, store: ReadStore): Promise<void> {
  const n = await store.get<NotificationDoc>(NOTIFICATIONS, event.data.id);
  // Sent and failed are a delivery's last events (nothing is claimed after them): one arriving
  // once either is applied is a replay (a projector goes on from its last stored checkpoint), and
  // would count a sent message's attempt again, or move it back to sending.
  if (!n || n.status === 'sent' || n.status === 'failed') return;
  let next: Partial<NotificationDoc>;
  switch (event.type) {
    case 'NotificationClaimed':
      next = { status: 'sending' };
      break;
    case 'NotificationSent':
      next = { status: 'sent', sentAt: formatDateTime(new Date(event.metadata.at)), error: null, attempts: n.attempts + 1 };
      break;
    case 'NotificationAttemptFailed':
      next = { status: 'pending', attempts: event.data.attempt, error: event.data.error, _dueAt: formatDateTime(new Date(event.data.retryAt)) };
      break;
    case 'NotificationFailed':
      next = { status: 'failed', error: event.data.error };
      break;
    default:
      return unknownEvent(event, undefined);
  }
  await store.put(NOTIFICATIONS, { ...n, ...next } as unknown as Doc);
}

/** Messages not yet sent go to the volunteer's current address (the volunteers projector ran first). */
async function onEmailChanged(event: RecordedEvent, constituentId: number, changes: Values, store: ReadStore): Promise<void> {
  const to = typeof changes.Email1 === 'string' ? changes.Email1 : null;
  const pending = and(eq('_constituent', constituentId), eq('status', 'pending'), queuedBefore(event.position));
  if (to) await store.updateWhere(NOTIFICATIONS, pending, { to });
  else await store.updateWhere(NOTIFICATIONS, pending, { to: null, status: 'skipped', error: 'The volunteer has no email address.' });
}

/** decisions.md §17: an erased person's messages keep no address, and those not sent yet never go. */
async function onErased(constituentId: number, store: ReadStore): Promise<void> {
  // By the constituent each message records: a volunteer record deleted before still had them.
  const mine = eq('_constituent', constituentId);
  await cancelPending(store, mine);
  // The error too: a mail server's refusal named the recipient before the sender took it out.
  await store.updateWhere(NOTIFICATIONS, mine, { to: null, error: null });
}

/**
 * The notification outbox, derived from the log: assignments queue, unassignments, reassignments
 * and deletions cancel, start changes move the reminder, and the delivery streams
 * (`notification-<id>`) record claims, sends and failures; an auto-disabled webhook endpoint
 * queues an alert to the team. Rebuilt from the log on every start,
 * so a restart loses nothing due and forgets nothing sent.
 */
export const outboxProjection: Projector<'notification' | 'constituent' | 'volunteer_task' | 'webhook_endpoint'> = {
  name: NOTIFICATIONS,
  // 3: each message records where the event that queued it stands (`_queued`) and whose it is
  // (`_constituent`); an erasure clears its error.
  version: 3,
  collections: [
    {
      name: NOTIFICATIONS,
      idField: 'id',
      indexes: [['FkTeam'], ['taskId'], ['status'], ['volunteerId'], ['_constituent']],
      // The outbox list (outboxQuery) and the sender's due look-up (dueQuery), each read in index order.
      sorts: [
        { where: ['FkTeam'], sort: OUTBOX_ORDER },
        { where: ['status'], sort: [{ field: '_dueAt', dir: 'asc' }] },
      ],
    },
  ],
  categories: ['notification', 'constituent', 'volunteer_task', 'webhook_endpoint'],
  eventTypes: { constituent: ['ConstituentUpdated', 'ConstituentErased'], webhook_endpoint: ['WebhookEndpointDisabled'] },
  async apply(event, store) {
    if (inCategory(event, 'notification')) return onDelivery(event, store);
    if (event.type === 'WebhookEndpointDisabled') {
      await store.insertIfAbsent(NOTIFICATIONS, await endpointDisabledAlert(event, store));
      return;
    }
    if (event.type === 'ConstituentUpdated' && 'Email1' in event.data.changes) return onEmailChanged(event, event.data.id, event.data.changes, store);
    if (event.type === 'ConstituentErased') return onErased(event.data.id, store);
    if (inCategory(event, 'volunteer_task')) return onTaskEvent(event, store);
  },
};

/** What each task event does to the task's queued messages. */
async function onTaskEvent(event: LoggedEvent<'volunteer_task'>, store: ReadStore): Promise<void> {
  const taskId = streamIdOf(event.stream);
  switch (event.type) {
    case 'VolunteerTaskAssigned':
      return onAssigned(event, taskId, store);
    case 'VolunteerTaskUnassigned':
      return cancelPending(store, and(eq('taskId', taskId), eq('volunteerId', event.data.volunteerId)), event);
    case 'VolunteerTaskDeleted':
      return cancelPending(store, eq('taskId', taskId), event);
    case 'VolunteerTaskUpdated':
      if ('TaskStartDateTime' in event.data.changes) return onStartChanged(event, event.data.changes, taskId, store);
      return;
    case 'VolunteerTaskCreated':
    case 'VolunteerTaskLocked':
    case 'VolunteerTaskUnlocked':
      return;
    default:
      return unknownEvent(event, undefined);
  }
}

export const outboxQuery = (team: number): Query => ({
  collection: NOTIFICATIONS,
  filter: eq('FkTeam', team),
  sort: OUTBOX_ORDER,
});

/** What the sender should try now. */
export const dueQuery = (now: Date, limit: number): Query => ({
  collection: NOTIFICATIONS,
  filter: and(eq('status', 'pending'), lte('_dueAt', formatDateTime(now))),
  sort: [{ field: '_dueAt', dir: 'asc' }],
  page: { page: 1, pageSize: limit },
});

export const sendingQuery = (): Query => ({ collection: NOTIFICATIONS, filter: eq('status', 'sending') });

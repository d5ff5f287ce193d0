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

/**
 * Cancels the messages not sent yet that `filter` names (pending, or claimed by the sender and
 * still `sending`: an attempt the mail server then refuses is not tried again), those queued
 * before `event` (queuedBefore); all of them without one (an erasure).
 */
async function cancelPending(store: ReadStore, filter: Filter, event?: RecordedEvent): Promise<void> {
  for (const status of ['pending', 'sending'])
    await store.updateWhere(NOTIFICATIONS, and(filter, eq('status', status), event && queuedBefore(event.position)), { status: 'canceled' });
}

async function onAssigned(event: RecordedEvent<TaskAssigned>, taskId: number, store: ReadStore): Promise<void> {
  const previous = event.data.previousVolunteerId;
  // A reassignment cancels the removed volunteer's queued messages (decisions.md 8).
  if (previous !== null) await cancelPending(store, and(eq('taskId', taskId), eq('volunteerId', previous)), event);
  const volunteerId = event.data.volunteerId;
  const task = await noteTask(store, taskId, event, { holder: volunteerId });
  const volunteer = await store.get<Doc>(VOLUNTEERS, volunteerId);
  // The task's start as this assignment found it, not as the task reads now: the outbox rebuilt
  // alone (its version raised) would plan from a start moved since, and queue again a reminder
  // that was sent under another id.
  const plan = planNotifications({ taskId, revision: Number(event.revision), assignedAt: event.metadata.at, start: asOf(task.starts, event, null) });
  for (const p of plan) await queue(store, event, taskId, volunteerId, volunteer, p);
}

/** What the outbox keeps of each task: its start and its volunteer, by the task's revision each took effect at. */
interface OutboxTask {
  id: number;
  starts: Array<[number, string | null]>;
  holders: Array<[number, number | null]>;
}

export const OUTBOX_TASKS = 'outboxTasks';

/**
 * Notes a task event's start or volunteer, by its revision (an event applied again notes nothing
 * twice), and answers what the outbox knows of the task. Kept by the outbox itself, in the log's
 * order, so that an event reads the task as of itself, however far the task read model has gone.
 */
async function noteTask(store: ReadStore, taskId: number, event: RecordedEvent, change: { start?: string | null; holder?: number | null }): Promise<OutboxTask> {
  const task = (await store.get<OutboxTask>(OUTBOX_TASKS, taskId)) ?? { id: taskId, starts: [], holders: [] };
  const rev = Number(event.revision);
  const note = <T>(entries: Array<[number, T]>, value: T) => {
    if (entries.some(([r]) => r === rev)) return false;
    entries.push([rev, value]);
    entries.sort((a, b) => a[0] - b[0]);
    return true;
  };
  const started = 'start' in change && note(task.starts, change.start ?? null);
  const held = 'holder' in change && note(task.holders, change.holder ?? null);
  if (started || held) await store.put(OUTBOX_TASKS, task as unknown as Doc);
  return task;
}

/** An entry's value as of `event` (the last noted at its revision or before), else `none`. */
function asOf<T>(entries: Array<[number, T]>, event: RecordedEvent, none: T): T {
  const rev = Number(event.revision);
  let value = none;
  for (const [r, v] of entries) if (r <= rev) value = v;
  return value;
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
  const task = await noteTask(store, taskId, event, { start: typeof changes.TaskStartDateTime === 'string' ? changes.TaskStartDateTime : null });
  const pending = await store.find<NotificationDoc>({ collection: NOTIFICATIONS, filter: and(eq('taskId', taskId), eq('status', 'pending'), eq('kind', 'task_reminder'), queuedBefore(event.position)) });
  const sendAt = rescheduleReminder(typeof changes.TaskStartDateTime === 'string' ? changes.TaskStartDateTime : null, event.metadata.at);
  for (const n of pending.items)
    await store.put(NOTIFICATIONS, (sendAt ? { ...n, sendAt, _dueAt: sendAt } : { ...n, status: 'canceled' }) as unknown as Doc);
  // An assigned task with no reminder pending (assigned inside 24 hours, or before it had a start)
  // gets one for its new start. A change that also assigns is planned by the assignment itself.
  if (pending.items.length || !sendAt || 'FkVolunteer' in changes) return;
  const volunteerId = asOf(task.holders, event, null);
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
  // Canceled while the sender held it (claimed before a reassignment, an unassignment, a deletion
  // or an erasure): an attempt that did not go through is not tried again (decisions.md 8: the
  // removed volunteer is not e-mailed); one that did go out is recorded as sent.
  const canceled = n.status === 'canceled';
  let next: Partial<NotificationDoc>;
  switch (event.type) {
    case 'NotificationClaimed':
      next = canceled ? {} : { status: 'sending' };
      break;
    case 'NotificationSent':
      next = { status: 'sent', sentAt: formatDateTime(new Date(event.metadata.at)), error: null, attempts: n.attempts + 1 };
      break;
    case 'NotificationAttemptFailed':
      next = canceled ? { attempts: event.data.attempt, error: event.data.error } : { status: 'pending', attempts: event.data.attempt, error: event.data.error, _dueAt: formatDateTime(new Date(event.data.retryAt)) };
      break;
    case 'NotificationFailed':
      next = canceled ? { error: event.data.error } : { status: 'failed', error: event.data.error };
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
  // (`_constituent`); an erasure clears its error. 4: each task's start and volunteer kept by the
  // outbox (outboxTasks), so an assignment plans from the start it found; a canceled message stays
  // canceled whatever its sender's attempt answers.
  version: 4,
  collections: [
    { name: OUTBOX_TASKS, idField: 'id', indexes: [] },
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
      await noteTask(store, taskId, event, { holder: null });
      return cancelPending(store, and(eq('taskId', taskId), eq('volunteerId', event.data.volunteerId)), event);
    case 'VolunteerTaskDeleted':
      return cancelPending(store, eq('taskId', taskId), event);
    case 'VolunteerTaskUpdated':
      if ('TaskStartDateTime' in event.data.changes) return onStartChanged(event, event.data.changes, taskId, store);
      return;
    case 'VolunteerTaskCreated': {
      const start = event.data.fields.TaskStartDateTime;
      await noteTask(store, taskId, event, { start: typeof start === 'string' ? start : null });
      return;
    }
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

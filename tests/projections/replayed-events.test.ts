import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { NotificationEvent } from '../../domain/notification/delivery.js';
import { NOTIFICATIONS, outboxProjection } from '../../projections/outbox.js';
import { type Doc, eq } from '../../projections/store/port.js';
import { VOLUNTEER_TASKS, volunteerTasksProjection } from '../../projections/volunteer-tasks.js';
import { VOLUNTEERS, volunteersProjection } from '../../projections/volunteers.js';
import { API_KEYS, TEAMS, teamsProjection } from '../../projections/teams.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';

/**
 * A projector goes on from its last stored checkpoint after a crash, or, on a MongoDB server
 * without transactions, after a step whose checkpoint was refused (docs/production.md): the
 * events after it are applied again, so each must leave a document as once would.
 */
const meta = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: '2026-11-28T10:00:00.000Z' };
const delivery = (revision: number, e: NotificationEvent): RecordedEvent =>
  ({ stream: 'notification-7-0-task_assigned', revision: BigInt(revision), position: { commit: BigInt(100 + revision), prepare: BigInt(100 + revision) }, ...e, metadata: meta }) as unknown as RecordedEvent;

const id = '7-0-task_assigned';
const events = [
  delivery(0, { type: 'NotificationClaimed', data: { id, owner: 'a', leaseUntil: '2026-11-28T10:01:00.000Z' } }),
  delivery(1, { type: 'NotificationAttemptFailed', data: { id, error: 'refused', attempt: 1, retryAt: '2026-11-28T10:05:00.000Z' } }),
  delivery(2, { type: 'NotificationClaimed', data: { id, owner: 'a', leaseUntil: '2026-11-28T10:06:00.000Z' } }),
  delivery(3, { type: 'NotificationSent', data: { id } }),
];

async function storeWithMessage(): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  for (const c of outboxProjection.collections) await store.defineCollection(c);
  await store.put(NOTIFICATIONS, {
    id,
    FkTeam: 1,
    kind: 'task_assigned',
    taskId: 7,
    volunteerId: 3,
    endpointId: null,
    to: 'v@example.org',
    sendAt: '2026-11-28T10:00:00.000Z',
    status: 'pending',
    attempts: 0,
    error: null,
    sentAt: null,
    _dueAt: '2026-11-28T10:00:00.000Z',
  } as Doc);
  return store;
}

const apply = async (store: MemoryReadStore, list: RecordedEvent[]) => {
  for (const e of list) await outboxProjection.apply(e as never, store);
};

describe("a message's delivery events applied again", () => {
  it.each([0, 1, 2, 3])('from revision %i leave the message as applied once: sent, two attempts', async (from) => {
    const once = await storeWithMessage();
    await apply(once, events);
    const twice = await storeWithMessage();
    await apply(twice, events);
    await apply(twice, events.slice(from));
    expect(await twice.get(NOTIFICATIONS, id)).toEqual(await once.get(NOTIFICATIONS, id));
    expect(await once.get(NOTIFICATIONS, id)).toMatchObject({ status: 'sent', attempts: 2, error: null, sentAt: '2026-11-28T10:00:00' });
  });

  it('before the last one, too: a failure applied again counts its attempt once', async () => {
    const store = await storeWithMessage();
    await apply(store, events.slice(0, 2));
    await apply(store, events.slice(0, 2));
    expect(await store.get(NOTIFICATIONS, id)).toMatchObject({ status: 'pending', attempts: 1, error: 'refused' });
    await apply(store, events.slice(2));
    expect(await store.get(NOTIFICATIONS, id)).toMatchObject({ status: 'sent', attempts: 2 });
  });

  it('a message given up is not moved back by its claims applied again', async () => {
    const store = await storeWithMessage();
    const failed = [...events.slice(0, 3), delivery(3, { type: 'NotificationFailed', data: { id, error: 'gave up' } })];
    await apply(store, failed);
    await apply(store, failed.slice(2));
    expect(await store.get(NOTIFICATIONS, id)).toMatchObject({ status: 'failed', attempts: 1, error: 'gave up' });
  });
});

describe('a message canceled while its sender held it (decisions.md §8: the removed volunteer is not e-mailed)', () => {
  it('stays canceled whatever its sender\'s attempt then records, counting the attempt, unless it went out', async () => {
    const store = await storeWithMessage();
    await apply(store, events.slice(0, 1));
    await store.updateWhere(NOTIFICATIONS, eq('id', id), { status: 'canceled' });
    const failedAgain = delivery(3, { type: 'NotificationFailed', data: { id, error: 'gave up' } });
    await apply(store, [events[1], events[2], failedAgain]);
    expect(await store.get(NOTIFICATIONS, id)).toMatchObject({ status: 'canceled', attempts: 1, error: 'gave up' });
    // One that did go out is recorded as sent: what happened.
    await apply(store, [events[3]]);
    expect(await store.get(NOTIFICATIONS, id)).toMatchObject({ status: 'sent', attempts: 2 });
  });
});

describe("a team's events applied again", () => {
  const team = (revision: number, type: string, data: Record<string, unknown>): RecordedEvent =>
    ({ stream: 'team-1', revision: BigInt(revision), position: { commit: BigInt(revision + 1), prepare: BigInt(revision + 1) }, type, data, metadata: { ...meta, at: `2026-11-28T10:0${revision}:00.000Z` } }) as unknown as RecordedEvent;
  const history = [
    team(0, 'TeamCreated', { id: 1, name: 'Before' }),
    team(1, 'ApiKeyIssued', { keyId: 5, name: 'Sync', scope: 'read_write', prefix: 'tk_abc', hash: 'h' }),
    team(2, 'TeamUpdated', { id: 1, changes: { name: 'After' } }),
    team(3, 'ApiKeyRevoked', { keyId: 5 }),
  ];

  it.each([0, 1, 2, 3])('from revision %i never give back a revoked key or an old name, even for a moment', async (from) => {
    const store = new MemoryReadStore();
    for (const c of teamsProjection.collections) await store.defineCollection(c);
    const applied = async (e: RecordedEvent) => teamsProjection.apply(e as never, store);
    for (const e of history) await applied(e);
    for (const e of history.slice(from)) {
      await applied(e);
      expect(await store.get(API_KEYS, 5)).toMatchObject({ revokedAt: '2026-11-28T10:03:00.000Z' });
      expect(await store.get(TEAMS, 1)).toMatchObject({ name: 'After' });
    }
  });
});

describe("a task's and a volunteer's events applied again, and the messages a later event of the run queued", () => {
  // After the reviewer's tests (tests/review/replay-outbox.test.ts of the 2026-11-28 review).
  const task = (revision: number, type: string, data: Record<string, unknown>): RecordedEvent =>
    ({ stream: 'volunteer_task-7', revision: BigInt(revision), position: { commit: BigInt(10 * revision), prepare: BigInt(10 * revision) }, type, data, metadata: { ...meta, at: `2026-11-28T10:0${revision}:00.000Z` } }) as unknown as RecordedEvent;
  const emailChanged = (commit: number, email: string | null): RecordedEvent =>
    ({ stream: 'constituent-9', revision: BigInt(commit), position: { commit: BigInt(commit), prepare: BigInt(commit) }, type: 'ConstituentUpdated', data: { id: 9, changes: { Email1: email } }, metadata: meta }) as unknown as RecordedEvent;
  const assigned = (revision: number) => task(revision, 'VolunteerTaskAssigned', { id: 7, volunteerId: 3, previousVolunteerId: null, via: 'api', DateAssigned: '2026-11-28' });

  async function outbox(): Promise<MemoryReadStore> {
    const store = new MemoryReadStore();
    for (const p of [outboxProjection, volunteerTasksProjection, volunteersProjection]) for (const c of p.collections) await store.defineCollection(c);
    await store.put(VOLUNTEERS, { PkVolunteer: 3, FkTeam: 1, FkConstituent: 9, Email1: 'v@example.org' } as Doc);
    await store.put(VOLUNTEER_TASKS, { PkTask: 7, FkTeam: 1, FkVolunteer: 3, TaskStartDateTime: '2026-12-10T10:00:00' } as Doc);
    return store;
  }
  const messages = async (store: MemoryReadStore) =>
    Object.fromEntries((await store.find<Doc>({ collection: NOTIFICATIONS, filter: eq('taskId', 7) })).items.map((n) => [n.id, `${n.status as string} ${n.to as string} ${n.sendAt as string}`]));
  const applyAll = async (store: MemoryReadStore, run: RecordedEvent[]) => {
    for (const e of run) await outboxProjection.apply(e as never, store);
  };

  // The task's stream begins with its creation: the outbox plans an assignment from the start the
  // task had then, as its own events tell it (outbox version 4), not from the task read model.
  const created = task(0, 'VolunteerTaskCreated', { id: 7, fields: { VolunteerTaskTitle: 'T', TaskStartDateTime: '2026-12-10T10:00:00', FkVolunteer: null, DateAssigned: null } });
  const runs: Array<[string, RecordedEvent[]]> = [
    ['unassigned, then assigned again', [created, assigned(1), task(2, 'VolunteerTaskUnassigned', { id: 7, volunteerId: 3, reason: 'unassigned' }), assigned(3)]],
    ['its start cleared, then set again', [created, assigned(1), task(2, 'VolunteerTaskUpdated', { id: 7, changes: { TaskStartDateTime: null } }), task(3, 'VolunteerTaskUpdated', { id: 7, changes: { TaskStartDateTime: '2026-12-12T10:00:00' } })]],
    ['deleted, after the messages of another assignment', [created, assigned(1), task(2, 'VolunteerTaskDeleted', { id: 7 }), assigned(3)]],
    ["the volunteer's e-mail cleared, then set again, then assigned", [created, assigned(1), emailChanged(15, null), emailChanged(25, 'new@example.org'), assigned(3)]],
  ];

  it.each(runs)('%s: applied again from any event, the messages end as applied once', async (_name, run) => {
    const once = await outbox();
    await applyAll(once, run);
    const expected = await messages(once);
    expect(Object.values(expected).some((m) => String(m).startsWith('pending'))).toBe(true);
    for (let from = 0; from < run.length; from++) {
      const again = await outbox();
      await applyAll(again, run);
      await applyAll(again, run.slice(from));
      expect(await messages(again)).toEqual(expected);
    }
  });
});

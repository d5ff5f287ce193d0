import { describe, expect, it } from 'vitest';
import { WEBHOOK_TYPES } from '../../domain/webhook-endpoint/types.js';
import type { Reply } from '../support/app.js';
import { payloadErrors } from '../support/payload-schemas.js';
import { type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

/**
 * Issue 16 point 10, spec 6.3/6.4 and decisions.md 7: a payload is the record as it stands after
 * the change (as it was, for a delete), with every link (a volunteer's name, a group's title, a
 * lookup's name) as it was at that moment. Every write below is followed by a read of the record
 * through the API; the webhook of that write must carry exactly what the read shows, under the
 * stamps of 6.3, and match its type's published schema. Every catalog type is produced.
 */
let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

type Team = Awaited<ReturnType<WebhookApp['team']>>;
interface Expected {
  type: string;
  /** The record the webhook is about, by its id field, and the revision the write left. */
  id: number;
  version?: number;
  data: Record<string, unknown>;
}

const ok = (r: Reply, status = 200) => {
  expect(r.status, r.raw).toBe(status);
  return r.body;
};
const revisionOf = (r: Reply) => Number(String(r.headers.etag).replace(/"/g, ''));
const ID_FIELD: Record<string, string> = { constituent: 'PkConstituent', volunteer: 'PkVolunteer', volunteer_task: 'PkTask', event: 'PkEvent', donation: 'PkDonation' };
const idOf = (type: string, data: any): number =>
  type.startsWith('volunteer_task.') && data.task ? data.task.PkTask : type.startsWith('donation.recurring') ? data.PkRecurringGift : data[ID_FIELD[type.split('.')[0]]];

/** The walk's expectations, and reads through the API as the walk goes. */
function scenario(team: Team) {
  const api = team.api.Integration;
  const expected: Expected[] = [];
  const last = new Map<string, { data: any; version: number }>();
  const read = async (path: string, key: string) => {
    const r = await api.get(path);
    const data = ok(r)[key];
    return { data, version: revisionOf(r) };
  };
  return {
    expected,
    read,
    /** After a write: the webhook of `type` carries the record as `path` now reads it. */
    async record(type: string, path: string, key: string) {
      const now = await read(path, key);
      last.set(path, now);
      const { DateLastModified, ...rest } = now.data;
      const data = type.endsWith('.created') ? rest : now.data;
      expected.push({ type, id: idOf(type, now.data), version: now.version, data });
      return now.data;
    },
    /** Before a delete: the webhook carries the record as last read, with DeletedUtc. */
    deleted(type: string, path: string) {
      const { data, version } = last.get(path)!;
      const { DateLastModified: _, ...rest } = data;
      expected.push({ type, id: idOf(type, data), version: version + 1, data: { ...rest, DeletedUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/) } });
    },
    /** Spec 6.4: the task as it now reads, `volunteer`'s constituent and the task's group, as they read now. */
    async person(type: string, taskId: number, constituentId: number, district: string | null) {
      const task = await read(`/volunteer-tasks/${taskId}`, 'volunteerTask');
      const c = (await read(`/constituents/${constituentId}`, 'constituent')).data;
      const g = (await read(`/volunteer-task-groups/${task.data.FkTaskGroup}`, 'volunteerTaskGroup')).data;
      const data = {
        constituent: { PkConstituent: String(c.PkConstituent), FirstName: c.FirstName, LastName: c.LastName, Email1: c.Email1, Phone1: c.Phone1 },
        task: { PkTask: taskId, ...pick(task.data, 'TaskStartDateTime', 'TaskEndDateTime', 'VolunteerTaskTitle', 'VolunteerTaskDescription') },
        taskGroup: { PkTaskGroup: String(g.PkTaskGroup), TaskGroupTitle: g.TaskGroupTitle, GroupLocationName: g.GroupLocationName, DistrictName: district, PrecinctName: null },
        EventUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
      };
      expected.push({ type, id: taskId, version: task.version, data });
    },
    /** Donations and recurring gifts have no read on the API: the write's answer is the record. */
    answered(type: string, record: any) {
      const { DateLastModified, ...rest } = record;
      const stamp = type === 'donation.created' || type === 'donation.refunded' || type === 'donation.recurring_started' ? rest : record;
      expected.push({ type, id: idOf(type, record), data: type === 'donation.deleted' ? { ...rest, DeletedUtc: expect.any(String) } : stamp });
    },
  };
}

const pick = (o: any, ...keys: string[]) => Object.fromEntries(keys.map((k) => [k, o[k]]));

describe('webhook payloads follow the payload rules on every type (issue 16 point 10)', () => {
  it('carry the record as the API reads it right after each change, links included, and match their schemas', async () => {
    const team = await t.team();
    ok(await team.admin.post('/webhook-endpoints', { url: rx.url('/rules'), events: ['*'] }), 201);
    const api = team.api.Integration;
    const s = scenario(team);
    const district = ok(await team.admin.post('/lookups/districts', { name: 'North' }), 201).id;
    const group = ok(await team.admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Canvass', GroupLocationName: 'Hall', FkDistrict: district }), 201).volunteerTaskGroup;

    // Constituents and volunteers; a volunteer shows its constituent's name as of each change.
    const c = ok(await api.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org', Phone1: '5558675309' }), 201).constituent;
    const cPath = `/constituents/${c.PkConstituent}`;
    await s.record('constituent.created', cPath, 'constituent');
    ok(await api.patch(cPath, { Nickname: 'Countess' }));
    await s.record('constituent.updated', cPath, 'constituent');
    const v = ok(await api.post('/volunteers', { FkConstituent: c.PkConstituent }), 201).volunteer;
    const vPath = `/volunteers/${v.PkVolunteer}`;
    await s.record('volunteer.created', vPath, 'volunteer');
    ok(await api.patch(cPath, { LastName: 'King' }));
    await s.record('constituent.updated', cPath, 'constituent');
    ok(await api.patch(vPath, { NumTeeShirtsNeeded: 2 }));
    expect(await s.record('volunteer.updated', vPath, 'volunteer')).toMatchObject({ ConstituentName: 'Ada King' });
    const c2 = ok(await api.post('/constituents', { FirstName: 'Grace', LastName: 'Hopper' }), 201).constituent;
    await s.record('constituent.created', `/constituents/${c2.PkConstituent}`, 'constituent');
    const v2 = ok(await api.post('/volunteers', { FkConstituent: c2.PkConstituent }), 201).volunteer;
    await s.record('volunteer.created', `/volunteers/${v2.PkVolunteer}`, 'volunteer');

    // A task created assigned, in a group: the created payload already names its volunteer.
    const task = ok(
      await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Knock doors', TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-05-01T12:30:00', FkTaskGroup: group.PkTaskGroup, FkVolunteer: v.PkVolunteer }),
      201,
    ).volunteerTask;
    const tPath = `/volunteer-tasks/${task.PkTask}`;
    expect(await s.record('volunteer_task.created', tPath, 'volunteerTask')).toMatchObject({ VolunteerName: 'Ada King', TaskGroupTitle: 'Canvass' });
    await s.person('volunteer_task.signed_up', task.PkTask, c.PkConstituent, 'North');
    ok(await team.admin.patch(tPath, { FkDistrict: district }));
    expect(await s.record('volunteer_task.updated', tPath, 'volunteerTask')).toMatchObject({ DistrictName: 'North' });
    // A reassignment: signed_up for the new volunteer and updated, in one write.
    ok(await api.patch(tPath, { FkVolunteer: v2.PkVolunteer }));
    await s.record('volunteer_task.updated', tPath, 'volunteerTask');
    await s.person('volunteer_task.signed_up', task.PkTask, c2.PkConstituent, 'North');
    ok(await team.admin.post(`${tPath}/cancel`, {}));
    await s.record('volunteer_task.updated', tPath, 'volunteerTask');
    await s.person('volunteer_task.canceled', task.PkTask, c2.PkConstituent, 'North');
    ok(await team.admin.post(`${tPath}/sign-up`, { FkVolunteer: v.PkVolunteer }));
    await s.record('volunteer_task.updated', tPath, 'volunteerTask');
    await s.person('volunteer_task.signed_up', task.PkTask, c.PkConstituent, 'North');
    // Deleting the volunteer unassigns its task: the task shows no volunteer, unassigned names the one removed.
    s.deleted('volunteer.deleted', vPath);
    ok(await team.admin.del(vPath));
    expect(await s.record('volunteer_task.updated', tPath, 'volunteerTask')).toMatchObject({ FkVolunteer: null, VolunteerName: null });
    await s.person('volunteer_task.unassigned', task.PkTask, c.PkConstituent, 'North');
    s.deleted('volunteer_task.deleted', tPath);
    ok(await team.admin.del(tPath));

    // Events: the geography set in the application shows on the next event.updated.
    const ev = ok(await api.post('/events', { EventTitle: 'Gala', StartDate: '2030-06-01', StartTime: '18:00' }), 201).event;
    const ePath = `/events/${ev.PkEvent}`;
    await s.record('event.created', ePath, 'event');
    ok(await team.admin.patch(ePath, { FkDistrict: district }));
    ok(await api.patch(ePath, { StartTime: '7 PM' }));
    expect(await s.record('event.updated', ePath, 'event')).toMatchObject({ DistrictName: 'North', StartTime: '19:00' });
    s.deleted('event.deleted', ePath);
    ok(await team.admin.del(ePath));

    // Donations and recurring gifts.
    const d = ok(await team.admin.post('/donations', { FkConstituent: c.PkConstituent, Amount: 50, GiftDate: '2030-01-02', Purpose: 'General' }), 201).donation;
    s.answered('donation.created', d);
    s.answered('donation.updated', ok(await team.admin.patch(`/donations/${d.PkDonation}`, { Purpose: 'Building' })).donation);
    s.answered('donation.receipted', ok(await team.admin.post(`/donations/${d.PkDonation}/receipt`)).donation);
    s.answered('donation.thanked', ok(await team.admin.post(`/donations/${d.PkDonation}/thank`)).donation);
    s.answered('donation.refunded', ok(await team.admin.post(`/donations/${d.PkDonation}/refund`, { Amount: 20 }), 201).donation);
    const d2 = ok(await team.admin.post('/donations', { FkConstituent: c2.PkConstituent, Amount: 5 }), 201).donation;
    s.answered('donation.deleted', ok(await team.admin.del(`/donations/${d2.PkDonation}`)).donation);
    const g = ok(await team.admin.post('/recurring-gifts', { FkConstituent: c.PkConstituent, Amount: 10, Frequency: 'monthly' }), 201).recurringGift;
    s.answered('donation.recurring_started', g);
    s.answered('donation.recurring_canceled', ok(await team.admin.del(`/recurring-gifts/${g.PkRecurringGift}`)).recurringGift);

    const c3 = ok(await api.post('/constituents', { FirstName: 'Gone' }), 201).constituent;
    const c3Path = `/constituents/${c3.PkConstituent}`;
    await s.record('constituent.created', c3Path, 'constituent');
    s.deleted('constituent.deleted', c3Path);
    ok(await team.admin.del(c3Path));

    const c4 = ok(await api.post('/constituents', { FirstName: 'Forgotten' }), 201).constituent;
    ok(await team.admin.post(`/constituents/${c4.PkConstituent}/erase`, {}));

    // Every type delivered: records' webhooks go out side by side, so the last written is not
    // always the last to arrive (on a loaded machine a donation's came after the erasure's).
    const missing = () => WEBHOOK_TYPES.filter((type) => !rx.distinct('/rules').some((e) => e.type === type));
    await until(() => missing().length === 0, 15_000, 'every webhook type').catch(() => undefined);
    expect(missing()).toEqual([]);
    const got = rx.distinct('/rules');
    for (const e of got) expect(payloadErrors(e.type, e.data), `${e.type} ${e.id}`).toEqual([]);
    for (const x of s.expected) {
      const hits = got.filter((e) => e.type === x.type && idOf(e.type, e.data) === x.id && (x.version === undefined || e.version === x.version));
      expect(hits.map((e) => e.data), `${x.type} of ${x.id} at revision ${x.version}`).toEqual([x.data]);
    }
  }, 60_000);
});

describe('the published data schemas every test checks payloads against', () => {
  it('refuse a payload missing a field, with an unknown one, or with a field of the wrong type', () => {
    // Every field of the record is required, null or not: an id and a team are far from enough.
    expect(payloadErrors('constituent.created', { PkConstituent: 1, FkTeam: 1, DateCreated: '2026-11-01T12:00:00' }).length).toBeGreaterThan(10);
    expect(payloadErrors('webhook.ping', { endpointId: 3 })).toEqual([]);
    expect(payloadErrors('webhook.ping', {})).toEqual(["(data) must have required property 'endpointId'"]);
    expect(payloadErrors('webhook.ping', { endpointId: 3, extra: 1 })).toEqual(['(data) must NOT have additional properties (extra)']);
    expect(payloadErrors('webhook.ping', { endpointId: '3' })).toEqual(['/endpointId must be integer']);
    expect(payloadErrors('volunteer.signed_up', {})).toEqual(['volunteer.signed_up is not in the catalog']);
  });
});

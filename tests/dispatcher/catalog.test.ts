import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_TYPES } from '../../dispatcher/catalog.js';
import { type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

const ok = (r: { status: number; raw: string }, status = 200) => {
  expect(r.status, r.raw).toBe(status);
  return r as any;
};

describe('the event catalog, end to end', () => {
  it('fires every type of spec 6.2 at a receiver subscribed to ["*"], with the API field names', async () => {
    const team = await t.team();
    ok(await team.admin.post('/webhook-endpoints', { url: rx.url('/all'), events: ['*'] }), 201);
    const api = team.api.Integration;
    const district = ok(await team.admin.post('/lookups/districts', { name: 'North' }), 201).body.id;
    const group = ok(await team.admin.post('/volunteer-task-groups', { TaskGroupTitle: 'Canvass', GroupLocationName: 'Hall', FkDistrict: district }), 201).body.volunteerTaskGroup;

    const c = ok(await api.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org', Phone1: '5558675309' }), 201).body.constituent;
    ok(await api.patch(`/constituents/${c.PkConstituent}`, { Nickname: 'Countess' }));
    const c2 = ok(await api.post('/constituents', { FirstName: 'Grace' }), 201).body.constituent;
    const v = ok(await api.post('/volunteers', { FkConstituent: c.PkConstituent }), 201).body.volunteer;
    ok(await api.patch(`/volunteers/${v.PkVolunteer}`, { NumTeeShirtsNeeded: 2 }));
    const v2 = ok(await api.post('/volunteers', { FkConstituent: c2.PkConstituent }), 201).body.volunteer;
    const task = ok(
      await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Knock doors', VolunteerTaskDescription: 'Ward 3', TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-05-01T12:30:00', FkTaskGroup: group.PkTaskGroup }),
      201,
    ).body.volunteerTask;
    ok(await api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: v.PkVolunteer }));
    ok(await api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: null }));
    ok(await team.admin.post(`/volunteer-tasks/${task.PkTask}/sign-up`, { FkVolunteer: v2.PkVolunteer }));
    ok(await team.admin.post(`/volunteer-tasks/${task.PkTask}/cancel`, {}));
    ok(await api.patch(`/volunteer-tasks/${task.PkTask}`, { Mileage: 12 }));

    const ev = ok(await api.post('/events', { EventTitle: 'Gala', StartDate: '2030-06-01', StartTime: '18:00' }), 201).body.event;
    ok(await api.patch(`/events/${ev.PkEvent}`, { Theme: 'Blue' })); // not a listed change: no event.updated
    ok(await api.patch(`/events/${ev.PkEvent}`, { StartTime: '7 PM' }));

    const d = ok(await team.admin.post('/donations', { FkConstituent: c.PkConstituent, Amount: 50, GiftDate: '2030-01-02', Purpose: 'General' }), 201).body.donation;
    ok(await team.admin.patch(`/donations/${d.PkDonation}`, { Purpose: 'Building' }));
    ok(await team.admin.post(`/donations/${d.PkDonation}/receipt`));
    ok(await team.admin.post(`/donations/${d.PkDonation}/thank`));
    const refund = ok(await team.admin.post(`/donations/${d.PkDonation}/refund`, { Amount: 20 }), 201).body.donation;
    const d2 = ok(await team.admin.post('/donations', { FkConstituent: c2.PkConstituent, Amount: 5 }), 201).body.donation;
    ok(await team.admin.del(`/donations/${d2.PkDonation}`));
    const g = ok(await team.admin.post('/recurring-gifts', { FkConstituent: c.PkConstituent, Amount: 10, Frequency: 'monthly' }), 201).body.recurringGift;
    ok(await team.admin.del(`/recurring-gifts/${g.PkRecurringGift}`));

    ok(await team.admin.del(`/volunteer-tasks/${task.PkTask}`));
    ok(await team.admin.del(`/events/${ev.PkEvent}`));
    ok(await team.admin.del(`/volunteers/${v2.PkVolunteer}`));
    ok(await team.admin.del(`/constituents/${c2.PkConstituent}`));
    const c4 = ok(await api.post('/constituents', { FirstName: 'Forgotten' }), 201).body.constituent;
    ok(await team.admin.post(`/constituents/${c4.PkConstituent}/erase`, {}));

    // Deliveries run concurrently, so the last write's may arrive before earlier ones (a CI run
    // under load had the donations' arrive after the constituent's delete and erasure): wait for
    // every type, then say which never came.
    await until(() => WEBHOOK_TYPES.every((type) => rx.on('/all').some((r) => r.json.type === type)), 20_000, 'every type at /all').catch(() => undefined);
    // In the log's order, which the envelope id carries (decisions.md §7): deliveries run
    // concurrently, so arrival order is not the order of the writes.
    const logOrder = (id: string) => BigInt(id.split('_')[1]);
    const byType = (type: string) =>
      rx
        .on('/all')
        .filter((r) => r.json.type === type)
        .map((r) => r.json)
        .sort((a, b) => (logOrder(a.id) < logOrder(b.id) ? -1 : logOrder(a.id) > logOrder(b.id) ? 1 : 0));
    const missing = WEBHOOK_TYPES.filter((type) => byType(type).length === 0);
    expect(missing).toEqual([]);

    // Spec 6.3 and 6.4 shapes.
    expect(byType('constituent.updated')[0].data).toMatchObject({ PkConstituent: c.PkConstituent, Nickname: 'Countess', DateLastModified: expect.any(String) });
    expect(byType('constituent.deleted')[0].data).toMatchObject({ PkConstituent: c2.PkConstituent, DeletedUtc: expect.any(String) });
    expect(byType('volunteer.created').find((e) => e.data.PkVolunteer === v.PkVolunteer).data).toMatchObject({ FkConstituent: c.PkConstituent, ConstituentName: 'Ada Lovelace', Email1: 'ada@example.org' });
    const signedUp = byType('volunteer_task.signed_up')[0].data;
    expect(signedUp).toEqual({
      constituent: { PkConstituent: String(c.PkConstituent), FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org', Phone1: '5558675309' },
      task: { PkTask: task.PkTask, TaskStartDateTime: '2030-05-01T10:00:00', TaskEndDateTime: '2030-05-01T12:30:00', VolunteerTaskTitle: 'Knock doors', VolunteerTaskDescription: 'Ward 3' },
      taskGroup: { PkTaskGroup: String(group.PkTaskGroup), TaskGroupTitle: 'Canvass', GroupLocationName: 'Hall', DistrictName: 'North', PrecinctName: null },
      EventUtc: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/),
    });
    expect(byType('volunteer_task.unassigned')[0].data.constituent.FirstName).toBe('Ada');
    expect(byType('volunteer_task.canceled')[0].data.constituent.FirstName).toBe('Grace');
    const taskUpdates = byType('volunteer_task.updated');
    expect(taskUpdates.length).toBeGreaterThanOrEqual(5); // assign, unassign, sign-up, cancel, Mileage
    expect(taskUpdates.find((e) => e.data.FkVolunteer === v.PkVolunteer).data).toMatchObject({ VolunteerName: 'Ada Lovelace', TaskGroupTitle: 'Canvass', NumberOfHours: 2.5 });
    expect(byType('event.created')).toHaveLength(1);
    expect(byType('event.updated')).toHaveLength(1);
    expect(byType('event.updated')[0].data).toMatchObject({ PkEvent: ev.PkEvent, StartTime: '19:00', Theme: 'Blue' });
    expect(byType('donation.created')[0].data).toMatchObject({ PkDonation: d.PkDonation, FkConstituent: c.PkConstituent, Amount: 50, GiftDate: '2030-01-02', Purpose: 'General' });
    expect(byType('donation.refunded')[0].data).toMatchObject({ PkDonation: refund.PkDonation, RefundAmount: 20, FkRefundedDonation: d.PkDonation });
    expect(byType('donation.receipted')[0].data.IsReceipted).toBe(true);
    expect(byType('donation.recurring_started')[0].data).toMatchObject({ PkRecurringGift: g.PkRecurringGift, Frequency: 'monthly', Amount: 10 });
    // DUMP_WEBHOOK_SAMPLES=<file> writes one envelope per type, for docs/webhooks.md.
    if (process.env.DUMP_WEBHOOK_SAMPLES)
      writeFileSync(process.env.DUMP_WEBHOOK_SAMPLES, JSON.stringify(Object.fromEntries(WEBHOOK_TYPES.map((type) => [type, byType(type)[0]])), null, 2));
    const all = rx.on('/all').map((r) => r.json);
    for (const e of all) {
      expect(e.team).toBe(team.id);
      expect(e.id).toMatch(/^evt_\d+_\d+$/);
    }
    // Receivers de-duplicate on the envelope id (spec 6.6): two different webhooks never share one,
    // not even the signed_up and updated of one sign-up.
    const idsByType = new Map<string, Set<string>>();
    for (const e of all) idsByType.set(e.id, (idsByType.get(e.id) ?? new Set()).add(e.type));
    expect([...idsByType.entries()].filter(([, types]) => types.size > 1)).toEqual([]);
    // One write, one revision (decisions.md §7): a person-event and the volunteer_task.updated of
    // the same write carry the same version; an event's creation (with its form defaults) is 1.
    for (const p of byType('volunteer_task.signed_up')) {
      const sameWrite = byType('volunteer_task.updated').filter((u) => u.data.PkTask === p.data.task.PkTask && u.version === p.version);
      expect(sameWrite).toHaveLength(1);
      expect(sameWrite[0].id).not.toBe(p.id);
    }
    expect(byType('event.created')[0].version).toBe(1);
  }, 30_000);
});

describe('which endpoints an event is mapped for', () => {
  it('knows the types each category can fire', async () => {
    const { canReceive } = await import('../../dispatcher/catalog.js');
    expect(canReceive('volunteer', ['volunteer_task.updated'])).toBe(false);
    expect(canReceive('volunteer_task', ['volunteer_task.signed_up'])).toBe(true);
    expect(canReceive('recurring_gift', ['donation.recurring_started'])).toBe(true);
    expect(canReceive('event', ['constituent.created', 'donation.created'])).toBe(false);
    expect(canReceive('constituent', ['*'])).toBe(true);
    expect(canReceive('lookup', ['*'])).toBe(false);
    // Every catalog type is reachable from the category that fires it.
    const { WEBHOOK_TYPES } = await import('../../dispatcher/catalog.js');
    const category = (t: string) => (t.startsWith('donation.recurring') ? 'recurring_gift' : t.split('.')[0]);
    for (const t of WEBHOOK_TYPES) expect(canReceive(category(t), [t]), t).toBe(true);
  });
});

describe('task person-events beyond the catalog walk (decisions.md 7)', () => {
  it('fires signed_up for the new volunteer on a reassignment, and unassigned when a volunteer is deleted', async () => {
    const team = await t.team();
    ok(await team.admin.post('/webhook-endpoints', { url: rx.url('/people'), events: ['volunteer_task.signed_up', 'volunteer_task.unassigned', 'volunteer_task.updated'] }), 201);
    const api = team.api.Integration;
    const person = async (FirstName: string) => {
      const c = ok(await api.post('/constituents', { FirstName, LastName: 'Vol' }), 201).body.constituent;
      return ok(await api.post('/volunteers', { FkConstituent: c.PkConstituent }), 201).body.volunteer.PkVolunteer as number;
    };
    const [ann, ben] = [await person('Ann'), await person('Ben')];
    const task = ok(await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Stuff envelopes', FkVolunteer: ann }), 201).body.volunteerTask;
    ok(await api.patch(`/volunteer-tasks/${task.PkTask}`, { FkVolunteer: ben }));
    ok(await team.admin.del(`/volunteers/${ben}`));
    await rx.waitFor((r) => r.path === '/people' && r.json.type === 'volunteer_task.unassigned', 1, 15_000);
    // Three person-events, each with its volunteer_task.updated: six webhooks (arrival order is not guaranteed).
    await rx.waitFor((r) => r.path === '/people', 6, 15_000);
    const person_ = (type: string) => rx.on('/people').filter((r) => r.json.type === type).map((r) => r.json.data.constituent.FirstName);
    expect(person_('volunteer_task.signed_up').sort()).toEqual(['Ann', 'Ben']);
    expect(person_('volunteer_task.unassigned')).toEqual(['Ben']); // the reassignment removed Ann without an unassigned
    const updates = rx.on('/people').filter((r) => r.json.type === 'volunteer_task.updated');
    expect(updates.map((r) => r.json.data.FkVolunteer).sort()).toEqual([ann, ben, null].sort());
    // decisions.md 7: the updated that accompanies a person-event has the person-event's number plus 1,
    // and the same created and version; so the three writes' envelopes pair up exactly.
    const number = (id: string) => BigInt(/^evt_(\d+)_\d+$/.exec(id)![1]);
    for (const p of rx.on('/people').filter((r) => r.json.type !== 'volunteer_task.updated')) {
      const partner = updates.filter((u) => number(u.json.id) === number(p.json.id) + 1n);
      expect(partner, p.json.type).toHaveLength(1);
      expect(number(p.json.id) % 10n).toBe(0n);
      expect([partner[0].json.created, partner[0].json.version, partner[0].json.data.FkVolunteer]).toEqual([p.json.created, p.json.version, p.json.type === 'volunteer_task.unassigned' ? null : partner[0].json.data.FkVolunteer]);
    }
  }, 30_000);
});

describe('a volunteer PATCH that edits fields and moves the status (one write, decisions.md 7)', () => {
  it('fires exactly one volunteer.updated, showing the state the write left, for a PATCH that deactivates and edits', async () => {
    const team = await t.team();
    ok(await team.admin.post('/webhook-endpoints', { url: rx.url('/v'), events: ['volunteer.updated'] }), 201);
    const api = team.api.Integration;
    const c = ok(await api.post('/constituents', { FirstName: 'Ada', LastName: 'L' }), 201).body.constituent;
    const v = ok(await api.post('/volunteers', { FkConstituent: c.PkConstituent }), 201).body.volunteer;
    const after = ok(await api.patch(`/volunteers/${v.PkVolunteer}`, { IsTeamMember: true, IsActive: false, IsSuspended: true })).body.volunteer;
    expect(after).toMatchObject({ IsTeamMember: true, IsActive: false, IsSuspended: true });
    // A later marker write, so everything of the PATCH has been delivered when it arrives.
    ok(await api.patch(`/volunteers/${v.PkVolunteer}`, { NumTeeShirtsNeeded: 7 }));
    await rx.waitFor((r) => r.path === '/v' && r.json.data.NumTeeShirtsNeeded === 7, 1, 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    const ofPatch = rx.on('/v').map((r) => r.json).filter((e) => e.data.NumTeeShirtsNeeded !== 7);
    // Spec 6.2 "volunteer.updated: a volunteer's details change"; decisions.md §7: one write is one
    // revision and `version` lets receivers drop stale updates.
    expect(ofPatch.map((e) => ({ version: e.version, IsTeamMember: e.data.IsTeamMember, IsActive: e.data.IsActive, IsSuspended: e.data.IsSuspended }))).toEqual([
      { version: 2, IsTeamMember: true, IsActive: false, IsSuspended: true },
    ]);
  }, 40_000);
});

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNotificationSender } from '../../commands/notifications/sender.js';
import { FileTransport, type MailTransport, MemoryTransport } from '../../commands/notifications/transport.js';
import { formatDateTime } from '../../domain/shared/values.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { waitUntil } from '../support/nats.js';
import { taskTeam, volunteerWithOlderRefusal } from './volunteer-support.js';

const HOUR = 3600_000;
const inHours = (h: number) => formatDateTime(new Date(Date.now() + h * HOUR));

describe('queueing notifications', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const outbox = async (admin: { get(u: string): Promise<{ body: any }> }, taskId: number) =>
    (await admin.get('/outbox')).body.notifications.filter((n: { taskId: number }) => n.taskId === taskId);

  it('queues a confirmation now and a reminder 24 hours before a future start', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Nia');
    const start = inHours(72);
    const k = await team.task({ TaskStartDateTime: start, FkVolunteer: v.id });
    const n = await outbox(team.admin, k.PkTask);
    expect(n).toEqual([
      { id: expect.any(String), kind: 'signup_confirmation', taskId: k.PkTask, volunteerId: v.id, endpointId: null, to: 'nia@example.org', sendAt: expect.any(String), status: 'pending', attempts: 0, sentAt: null, error: null },
      expect.objectContaining({ kind: 'task_reminder', sendAt: formatDateTime(new Date(Date.parse(start + 'Z') - 24 * HOUR)), status: 'pending' }),
    ]);
    expect(Math.abs(Date.parse(n[0].sendAt + 'Z') - Date.now())).toBeLessThan(60_000);
  });

  it('queues no reminder inside 24 hours, and nothing for a past-dated task or one without a start', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Oz');
    const soon = await team.task({ TaskStartDateTime: inHours(5), FkVolunteer: v.id });
    expect((await outbox(team.admin, soon.PkTask)).map((n: { kind: string }) => n.kind)).toEqual(['signup_confirmation']);
    const past = await team.task({ TaskStartDateTime: inHours(-5) });
    await team.api.patch(`/volunteer-tasks/${past.PkTask}`, { FkVolunteer: v.id });
    expect(await outbox(team.admin, past.PkTask)).toEqual([]);
    const undated = await team.task({ FkVolunteer: v.id });
    expect(await outbox(team.admin, undated.PkTask)).toEqual([]);
  });

  it('cancels the removed volunteer’s queued messages on reassignment and unassignment', async () => {
    const team = await taskTeam(t);
    const a = await team.volunteer('Pia');
    const b = await team.volunteer('Quin');
    const k = await team.task({ TaskStartDateTime: inHours(72), FkVolunteer: a.id });
    await team.api.patch(`/volunteer-tasks/${k.PkTask}`, { FkVolunteer: b.id });
    let n = await outbox(team.admin, k.PkTask);
    expect(n.map((x: any) => [x.volunteerId, x.kind, x.status])).toEqual([
      [a.id, 'signup_confirmation', 'canceled'],
      [b.id, 'signup_confirmation', 'pending'],
      [a.id, 'task_reminder', 'canceled'],
      [b.id, 'task_reminder', 'pending'],
    ]);
    await team.admin.post(`/volunteer-tasks/${k.PkTask}/cancel`);
    n = await outbox(team.admin, k.PkTask);
    expect(n.every((x: { status: string }) => x.status === 'canceled')).toBe(true);
  });

  it('addresses pending messages to the volunteer’s current email', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Ray');
    const k = await team.task({ TaskStartDateTime: inHours(72), FkVolunteer: v.id });
    await team.api.patch(`/constituents/${v.constituent}`, { Email1: 'ray@new.example' });
    expect((await outbox(team.admin, k.PkTask)).map((x: { to: string }) => x.to)).toEqual(['ray@new.example', 'ray@new.example']);
  });

  it('moves a pending reminder with the task start', async () => {
    const team = await taskTeam(t);
    const v = await team.volunteer('Rae');
    const k = await team.task({ TaskStartDateTime: inHours(72), FkVolunteer: v.id });
    const later = inHours(96);
    await team.api.patch(`/volunteer-tasks/${k.PkTask}`, { TaskStartDateTime: later });
    const reminder = (await outbox(team.admin, k.PkTask)).find((x: { kind: string }) => x.kind === 'task_reminder');
    expect(reminder.sendAt).toBe(formatDateTime(new Date(Date.parse(later + 'Z') - 24 * HOUR)));
  });
});

describe('sending notifications', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'turnout-notify-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('sends each message once when due, across a restart', async () => {
    // The sender's clock: real time, moved ahead for the reminder.
    let offset = 0;
    const now = () => new Date(Date.now() + offset);
    const mailDir = path.join(dir, 'outbox');
    let t = await startTestApp({ dataDir: dir });
    let sender = startNotificationSender(t.runtime.services, { transport: new FileTransport(mailDir), now, intervalMs: 10 });
    const team = await taskTeam(t);
    const v = await team.volunteer('Sam');
    const k = await team.task({ VolunteerTaskTitle: 'Lit drop', TaskStartDateTime: inHours(72), FkVolunteer: v.id });
    const status = async (app: TestApp) => {
      const r = await app.admin.get(`/teams/${team.id}/outbox`);
      return Object.fromEntries(r.body.notifications.filter((n: any) => n.taskId === k.PkTask).map((n: any) => [n.kind, n.status]));
    };
    await waitUntil('the confirmation to be sent', async () => (await status(t)).signup_confirmation === 'sent');
    expect((await status(t)).task_reminder).toBe('pending');
    const files = () => readdirSync(mailDir).filter((f) => f.endsWith('.eml'));
    expect(files()).toHaveLength(1);
    const eml = readFileSync(path.join(mailDir, files()[0]), 'utf8');
    expect(eml).toMatch(/To: sam@example.org/);
    expect(eml).toMatch(/Subject: You're signed up: Lit drop/);

    // Restart: a new runtime on the same data directory rebuilds the outbox from the log.
    await sender.stop();
    await t.close();
    offset = 48 * HOUR + 60_000; // past the reminder's moment
    t = await startTestApp({ dataDir: dir });
    expect(await status(t)).toEqual({ signup_confirmation: 'sent', task_reminder: 'pending' });
    sender = startNotificationSender(t.runtime.services, { transport: new FileTransport(mailDir), now, intervalMs: 10 });
    await waitUntil('the reminder to be sent', async () => (await status(t)).task_reminder === 'sent');
    await sender.tick(); // one more full pass: nothing is sent again
    expect(files()).toHaveLength(2);
    const sentEvents = async (id: string) => (await t.runtime.services.log.readStream(`notification-${id}`)).filter((e) => e.type === 'NotificationSent');
    for (const n of (await t.admin.get(`/teams/${team.id}/outbox`)).body.notifications) expect(await sentEvents(n.id)).toHaveLength(1);
    await sender.stop();
    await t.close();
  });

  it('retries a refused message and records the attempts', async () => {
    const t = await startTestApp();
    const transport = new MemoryTransport();
    transport.failNext = 2;
    const sender = startNotificationSender(t.runtime.services, { transport, intervalMs: 5, retryBaseMs: 1 });
    const team = await taskTeam(t);
    const v = await team.volunteer('Tia');
    await team.task({ TaskStartDateTime: inHours(10), FkVolunteer: v.id });
    await waitUntil('the confirmation to be sent', async () => (await team.admin.get('/outbox')).body.notifications[0]?.status === 'sent');
    expect((await team.admin.get('/outbox')).body.notifications[0]).toMatchObject({ attempts: 3, error: null });
    expect(transport.sent).toHaveLength(1);
    await sender.stop();
    await t.close();
  });

  it("keeps no recipient's address from a refusal that names it, in its delivery events or the outbox", async () => {
    const t = await startTestApp();
    // A mail server refuses the recipient by name, its domain folded (decisions.md §17: an erasure
    // does not rewrite a message's delivery events).
    const transport = new MemoryTransport();
    const refusing: MailTransport = { ...transport, name: 'refusing', send: async (m) => Promise.reject(new Error(`550 <${m.to.toUpperCase()}>: Recipient address rejected`)), wasDelivered: async () => false, close: async () => {} };
    const sender = startNotificationSender(t.runtime.services, { transport: refusing, intervalMs: 5, retryBaseMs: 60_000 });
    const team = await taskTeam(t);
    const v = await team.volunteer('Uma');
    await team.task({ TaskStartDateTime: inHours(10), FkVolunteer: v.id });
    await waitUntil('the refusal', async () => (await team.admin.get('/outbox')).body.notifications[0]?.attempts === 1);
    await sender.stop();
    const [n] = (await team.admin.get('/outbox')).body.notifications;
    expect(n.to).toBe('uma@example.org');
    expect(n.error).toBe('550 <the recipient>: Recipient address rejected');
    const events = await t.runtime.services.log.readStream(`notification-${n.id}`);
    expect(JSON.stringify(events.map((e) => e.data)).toLowerCase()).not.toContain('uma@');
    await t.close();
  });

  it("leaves no recipient's address an older refusal recorded, once the person is erased: the delivery record rewritten, the outbox's error cleared", async () => {
    const t = await startTestApp();
    const { team, v, stream } = await volunteerWithOlderRefusal(t);
    const log = t.runtime.services.log;
    expect((await t.admin.post(`/teams/${team.id}/constituents/${v.constituent}/erase`, {})).status).toBe(200);
    const events = await log.readStream(stream);
    expect(JSON.stringify(events.map((e) => e.data)).toLowerCase()).not.toContain('vic@example.org');
    expect(events.find((e) => e.type === 'NotificationAttemptFailed')?.data.error).toBe('550 <[erased]>: Recipient address rejected');
    expect((await team.admin.get('/outbox')).body.notifications[0]).toMatchObject({ to: null, error: null, status: 'canceled' });
    await t.close();
  });

  it('does not send again a message whose sender died mid-send when delivery is unknown, and resends when the transport knows it never arrived', async () => {
    const t = await startTestApp();
    const team = await taskTeam(t);
    const v = await team.volunteer('Uma');
    await team.task({ TaskStartDateTime: inHours(10), FkVolunteer: v.id });
    await team.task({ TaskStartDateTime: inHours(10), FkVolunteer: v.id });
    const [first, second] = (await team.admin.get('/outbox')).body.notifications;
    // A sender that claimed both and died: its leases have run out.
    const claim = (id: string) =>
      t.runtime.services.log.append(
        `notification-${id}`,
        [{ type: 'NotificationClaimed', data: { id, owner: 'dead', leaseUntil: new Date(Date.now() - 1000).toISOString() }, metadata: { team: team.id, source: 'Application', keyName: null, correlationId: 'x', at: new Date().toISOString() } }],
        'no_stream',
      );
    await claim(first.id);
    await claim(second.id);
    const sent: string[] = [];
    const unknownFirst: MailTransport = {
      name: 'test',
      send: async (m) => void sent.push(m.id),
      wasDelivered: async (id) => (id === first.id ? null : false),
      close: async () => {},
    };
    const sender = startNotificationSender(t.runtime.services, { transport: unknownFirst, intervalMs: 5 });
    const byId = async () => Object.fromEntries((await team.admin.get('/outbox')).body.notifications.map((n: any) => [n.id, n.status]));
    await waitUntil('both to be resolved', async () => {
      const s = await byId();
      return s[first.id] === 'failed' && s[second.id] === 'sent';
    });
    expect(sent).toEqual([second.id]);
    await sender.stop();
    await t.close();
  });
});

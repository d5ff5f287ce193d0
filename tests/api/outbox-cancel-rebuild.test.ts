import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startNotificationSender } from '../../commands/notifications/sender.js';
import { type MailMessage, type MailTransport, MemoryTransport } from '../../commands/notifications/transport.js';
import { formatDateTime } from '../../domain/shared/values.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { waitUntil } from '../support/nats.js';
import { taskTeam } from './volunteer-support.js';

/**
 * decisions.md §8, found by a review of the section: a message canceled while its sender held it
 * is never tried again, and the outbox built again on its own (a raised version) plans each
 * assignment from the task's start as that assignment found it.
 */
const HOUR = 3600_000;
const inHours = (h: number) => formatDateTime(new Date(Date.now() + h * HOUR));

describe('the notification outbox', () => {
  it('a reassignment while the removed volunteer\'s confirmation is being handed over, then refused: it stays canceled and never goes to them', async () => {
    const t = await startTestApp();
    const team = await taskTeam(t);
    const ann = await team.volunteer('Ann');
    const bob = await team.volunteer('Bob');
    const k = await team.task({ TaskStartDateTime: inHours(72), FkVolunteer: ann.id });

    const sent: MailMessage[] = [];
    let entered!: () => void;
    const inSend = new Promise<void>((r) => (entered = r));
    let refuse!: () => void;
    let first = true;
    const transport: MailTransport = {
      name: 'gated',
      send: async (m) => {
        if (first) {
          first = false;
          entered();
          await new Promise<void>((_, reject) => (refuse = () => reject(new Error('421 try again later'))));
        }
        sent.push(m);
      },
      wasDelivered: async () => false,
      close: async () => {},
    };
    const sender = startNotificationSender(t.runtime.services, { transport, intervalMs: 5, retryBaseMs: 1, retryMaxMs: 5 });
    await inSend; // Ann's confirmation is with the mail server
    expect((await team.api.patch(`/volunteer-tasks/${k.PkTask}`, { FkVolunteer: bob.id })).status).toBe(200);
    refuse(); // a temporary refusal: the sender records the attempt and would retry

    const ofTask = async () => (await team.admin.get('/outbox')).body.notifications.filter((n: any) => n.taskId === k.PkTask);
    await waitUntil("Bob's confirmation to be sent", async () => (await ofTask()).some((n: any) => n.volunteerId === bob.id && n.kind === 'signup_confirmation' && n.status === 'sent'));
    await new Promise((r) => setTimeout(r, 300));
    await sender.stop();
    const annConfirmation = (await ofTask()).find((n: any) => n.volunteerId === ann.id && n.kind === 'signup_confirmation');
    expect(sent.map((m) => m.to)).not.toContain('ann@example.org');
    expect(annConfirmation.status).toBe('canceled');
    await t.close();
  });

  it('rebuilding the outbox alone neither re-queues nor re-sends a reminder already sent', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rev26h-'));
    let offset = 0;
    const now = () => new Date(Date.now() + offset);
    const transport = new MemoryTransport();
    let t: TestApp = await startTestApp({ dataDir: dir });
    let sender = startNotificationSender(t.runtime.services, { transport, now, intervalMs: 10 });
    const team = await taskTeam(t);
    const v = await team.volunteer('Sal');
    const k = await team.task({ TaskStartDateTime: inHours(10), FkVolunteer: v.id }); // inside 24 h: a confirmation only
    const ofTask = async (app: TestApp) => (await app.admin.get(`/teams/${team.id}/outbox`)).body.notifications.filter((n: any) => n.taskId === k.PkTask);
    await waitUntil('the confirmation sent', async () => (await ofTask(t)).every((n: any) => n.status === 'sent'));
    expect((await team.api.patch(`/volunteer-tasks/${k.PkTask}`, { TaskStartDateTime: inHours(72) })).status).toBe(200);
    expect((await ofTask(t)).map((n: any) => [n.kind, n.status])).toEqual([['signup_confirmation', 'sent'], ['task_reminder', 'pending']]);
    offset = 48 * HOUR + 60_000;
    await waitUntil('the reminder sent', async () => (await ofTask(t)).every((n: any) => n.status === 'sent'));
    await sender.stop();
    expect(transport.sent).toHaveLength(2);
    const before = (await ofTask(t)).map((n: any) => [n.kind, n.status]);
    await t.close();

    // The outbox's recorded version differs from the code's: it is built again from the log on start.
    const db = new Database(path.join(dir, 'readmodels.sqlite'));
    db.prepare(`UPDATE _meta_versions SET version = version - 1 WHERE name = 'projector:notifications'`).run();
    db.close();
    t = await startTestApp({ dataDir: dir });
    const after = (await ofTask(t)).map((n: any) => [n.kind, n.status]);
    sender = startNotificationSender(t.runtime.services, { transport, now, intervalMs: 10 });
    await new Promise((r) => setTimeout(r, 500));
    await sender.tick();
    await sender.stop();
    await t.close();
    rmSync(dir, { recursive: true, force: true });
    expect(after).toEqual(before);
    expect(transport.sent.map((m) => m.subject)).toHaveLength(2);
  });
});

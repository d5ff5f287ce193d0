import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../domain/shared/values.js';
import { startTestApp } from '../support/app.js';
import { waitUntil } from '../support/nats.js';
import { taskTeam } from './volunteer-support.js';

const inHours = (h: number) => formatDateTime(new Date(Date.now() + h * 3600_000));

// Review of 84fc954/f6fc75d: scrubDeliveryRecords (runtime/erasure.ts) and the outbox's onErased find the
// person's messages through the VOLUNTEERS read model; a volunteer record deleted before the erasure
// is gone from it (projections/volunteers.ts VolunteerDeleted: REMOVED), so its messages' refusals keep
// the address in the log and the outbox.
describe("an erasure of a person whose volunteer record was deleted first", () => {
  it("leaves no address an older refusal recorded", async () => {
    const t = await startTestApp();
    try {
      const team = await taskTeam(t);
      const v = await team.volunteer('Vic');
      await team.task({ TaskStartDateTime: inHours(10), FkVolunteer: v.id });
      const [n] = (await team.admin.get('/outbox')).body.notifications;
      const log = t.runtime.services.log;
      const stream = `notification-${n.id}`;
      const meta = { team: team.id, source: 'Application' as const, keyName: null, correlationId: 'c', at: new Date().toISOString() };
      const claimed = await log.append(stream, [{ type: 'NotificationClaimed', data: { id: n.id, owner: 'old', leaseUntil: new Date(Date.now() + 60_000).toISOString() }, metadata: meta }], 'no_stream');
      await log.append(stream, [{ type: 'NotificationAttemptFailed', data: { id: n.id, error: '550 <VIC@EXAMPLE.ORG>: Recipient address rejected', attempt: 1, retryAt: new Date(Date.now() + 3_600_000).toISOString() }, metadata: meta }], claimed.nextExpectedRevision);
      await waitUntil('the refusal in the outbox', async () => (await team.admin.get('/outbox')).body.notifications[0]?.error?.includes('VIC@'));
      const del = await team.admin.del(`/volunteers/${v.id}`);
      expect(del.status, del.raw).toBe(200);
      expect((await t.admin.post(`/teams/${team.id}/constituents/${v.constituent}/erase`, {})).status).toBe(200);
      const events = await log.readStream(stream);
      const outbox = JSON.stringify((await team.admin.get('/outbox')).body.notifications).toLowerCase();
      expect({ log: JSON.stringify(events.map((e) => e.data)).toLowerCase().includes('vic@example.org'), outbox: outbox.includes('vic@example.org') }).toEqual({ log: false, outbox: false });
    } finally {
      await t.close();
    }
  });
});

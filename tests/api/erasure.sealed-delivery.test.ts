import { describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.js';
import { waitUntil } from '../support/nats.js';
import { taskTeam } from './volunteer-support.js';
import { formatDateTime } from '../../domain/shared/values.js';

const inHours = (h: number) => formatDateTime(new Date(Date.now() + h * 3600_000));

// The log wrapped as on the EventStoreDB stack (SealingEventLog: rewriteStream exists, constituent streams only).
describe("an erasure on the EventStoreDB stack's sealing log, of a person whose older refusal named the address (review of f6fc75d)", () => {
  it('answers 200: the delivery record it cannot rewrite is reported, not waited on', async () => {
    const t = await startTestApp({}, { env: { ...process.env, TURNOUT_BENCH_LOG: 'sealed' } });
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
      const r = await t.admin.post(`/teams/${team.id}/constituents/${v.constituent}/erase`, {});
      expect(r.status, r.raw).toBe(200);
    } finally {
      await t.close();
    }
  });
});

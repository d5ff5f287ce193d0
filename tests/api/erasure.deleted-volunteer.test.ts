import { describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.js';
import { volunteerWithOlderRefusal } from './volunteer-support.js';

// From a review of 84fc954: the erasure found the person's messages through the volunteers' read
// model, which a deleted volunteer record is gone from; each message now records its constituent.
describe('an erasure of a person whose volunteer record was deleted first', () => {
  it('leaves no address an older refusal recorded, in the delivery record or the outbox', async () => {
    const t = await startTestApp();
    try {
      const { team, v, stream } = await volunteerWithOlderRefusal(t);
      const log = t.runtime.services.log;
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

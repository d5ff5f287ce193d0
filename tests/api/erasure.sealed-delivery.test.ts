import { describe, expect, it } from 'vitest';
import { startTestApp } from '../support/app.js';
import { volunteerWithOlderRefusal } from './volunteer-support.js';

// The log wrapped as on the EventStoreDB stack (SealingEventLog: rewriteStream exists, constituent streams only).
describe("an erasure on the EventStoreDB stack's sealing log, of a person whose older refusal named the address (review of f6fc75d)", () => {
  it('answers 200: the delivery record it cannot rewrite is reported, not waited on', async () => {
    const t = await startTestApp({}, { env: { ...process.env, TURNOUT_BENCH_LOG: 'sealed' } });
    try {
      const { team, v } = await volunteerWithOlderRefusal(t);
      const r = await t.admin.post(`/teams/${team.id}/constituents/${v.constituent}/erase`, {});
      expect(r.status, r.raw).toBe(200);
    } finally {
      await t.close();
    }
  });
});

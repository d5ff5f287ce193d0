import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { handle } from '../../commands/aggregate.js';
import type { WriteContext } from '../../commands/context.js';
import { httpStatus } from '../../api/errors.js';
import type { Evolver } from '../../domain/shared/events.js';
import { DomainError, recordBusy } from '../../domain/shared/errors.js';
import { type EventLog, WrongExpectedRevision } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { taskTeam } from './volunteer-support.js';
import { failingAppends } from '../support/failing-appends.js';
import { constituentStream } from '../../domain/constituent/events.js';
import { holdLogCall } from '../support/held-log.js';

/**
 * Many concurrent writers of one record (commands/aggregate.ts handle()): each lost append race is
 * decided again on fresh state, after a short jittered wait, under a time budget; none answers 500.
 * A fixed count of tries (20) answered a writer that lost more races than that the raw conflict: 500.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const codes = (rs: Array<{ status: number; body: any }>) => rs.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.body.error?.code}`));
const changes = (events: Array<{ type: string; data: { changes?: Record<string, unknown> } }>, type: string, field: string) =>
  events.filter((e) => e.type === type && e.data.changes && field in e.data.changes).map((e) => e.data.changes![field]);

describe('concurrent writers of one record', () => {
  it('40 concurrent edits of one task all answer 200, and the log holds every one of them', async () => {
    const team = await taskTeam(t);
    const k = await team.task();
    const names = Array.from({ length: 40 }, (_, i) => `Contact ${i}`);
    const answers = await Promise.all(names.map((ContactName) => team.api.patch(`/volunteer-tasks/${k.PkTask}`, { ContactName })));
    expect(codes(answers).filter((c) => c !== 200)).toEqual([]);
    const h = (await team.admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    expect(changes(h, 'VolunteerTaskUpdated', 'ContactName').sort()).toEqual([...names].sort());
    // The last answer is the record as the last write left it.
    expect((await team.api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask.ContactName).toBe(changes(h, 'VolunteerTaskUpdated', 'ContactName').at(-1));
    // Each write's instant is when it was written, so the record's history runs forward in time
    // (asOf reads by it, decisions.md §10): a write decided again after a lost race is stamped
    // then, not when its request began, before the write that beat it.
    const ats = h.map((e: { at: string }) => e.at);
    expect(ats).toEqual([...ats].sort());
  });

  it('40 concurrent edits of one constituent all answer 200, and the log holds every one of them', async () => {
    const team = await taskTeam(t);
    const c = await team.api.post('/constituents', { FirstName: 'Ada', LastName: 'Roe', Email1: 'ada.contended@example.org' });
    expect(c.status, c.raw).toBe(201);
    const id = c.body.constituent.PkConstituent;
    const names = Array.from({ length: 40 }, (_, i) => `Roe${i}`);
    const answers = await Promise.all(names.map((LastName) => team.api.patch(`/constituents/${id}`, { LastName })));
    expect(codes(answers).filter((x) => x !== 200)).toEqual([]);
    const h = (await team.admin.get(`/history/constituents/${id}`)).body.events;
    expect(changes(h, 'ConstituentUpdated', 'LastName').sort()).toEqual([...names].sort());
  });

  it('30 concurrent batches upserting one email all answer 200, each item updating the one constituent', async () => {
    const team = await taskTeam(t);
    const c = await team.api.post('/constituents', { FirstName: 'Bea', LastName: 'Roe', Email1: 'bea.contended@example.org' });
    expect(c.status, c.raw).toBe(201);
    const id = c.body.constituent.PkConstituent;
    const names = Array.from({ length: 30 }, (_, i) => `Upserted${i}`);
    const answers = await Promise.all(
      names.map((LastName) => team.api.post('/constituents/batch?mode=upsert&matchOn=email', { items: [{ FirstName: 'Bea', LastName, Email1: 'bea.contended@example.org' }] })),
    );
    expect(codes(answers).filter((x) => x !== 200)).toEqual([]);
    for (const a of answers) expect(a.body.results[0]).toMatchObject({ status: 200, created: false, constituent: { PkConstituent: id } });
    const h = (await team.admin.get(`/history/constituents/${id}`)).body.events;
    expect(changes(h, 'ConstituentUpdated', 'LastName').sort()).toEqual([...names].sort());
  });

  it('40 concurrent upserts of a new email create one constituent: one 201, every other 200 with it', async () => {
    const team = await taskTeam(t);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => team.api.post('/constituents?mode=upsert&matchOn=email', { FirstName: 'Cy', LastName: `New${i}`, Email1: 'cy.contended@example.org' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(39).fill(200), 201]);
    expect(new Set(answers.map((a) => a.body.constituent.PkConstituent)).size).toBe(1);
  });

  it('of 10 ifOpen claims racing 30 field edits exactly one wins, the others are 409 not_open, every edit is 200', async () => {
    const team = await taskTeam(t);
    const vs: number[] = [];
    for (let i = 0; i < 10; i++) vs.push((await team.volunteer(`Claimer${i}`)).id);
    const k = await team.task();
    const edits = Array.from({ length: 30 }, (_, i) => team.api.patch(`/volunteer-tasks/${k.PkTask}`, { ContactName: `C${i}` }));
    const claims = vs.map((v) => team.api.patch(`/volunteer-tasks/${k.PkTask}?ifOpen=true`, { FkVolunteer: v }));
    const [e, c] = await Promise.all([Promise.all(edits), Promise.all(claims)]);
    expect(codes(e).filter((x) => x !== 200)).toEqual([]);
    const claimed = codes(c);
    expect(claimed.filter((x) => x === 200)).toHaveLength(1);
    expect(claimed.filter((x) => x !== 200)).toEqual(Array(9).fill('409 not_open'));
    const h = (await team.admin.get(`/history/volunteer-tasks/${k.PkTask}`)).body.events;
    expect(h.filter((x: { type: string }) => x.type === 'VolunteerTaskAssigned')).toHaveLength(1);
    expect((await team.api.get(`/volunteer-tasks/${k.PkTask}`)).body.volunteerTask.FkVolunteer).toBe(vs[claimed.indexOf(200)]);
    expect(changes(h, 'VolunteerTaskUpdated', 'ContactName')).toHaveLength(30);
  });
});

describe('a batch item that keeps losing past its budget', () => {
  it('fails the batch 503 record_busy with Retry-After, nothing written from it on; the retry with the key writes the rest', async () => {
    const team = await t.team();
    const api = team.api.Integration;
    // The third item's record append answers as handle() does once its budget is spent.
    const log = failingAppends(t, [3], recordBusy);
    const items = Array.from({ length: 5 }, (_, i) => ({ FirstName: 'Ada', LastName: `busy${i}`, Email1: `busy${i}@example.org` }));
    const headers = { 'idempotency-key': 'busy-batch' };
    try {
      const failed = await api.post('/constituents/batch', { items }, { headers });
      expect(failed.status, failed.raw).toBe(503);
      expect(failed.body.error.code).toBe('record_busy');
      expect(failed.headers['retry-after']).toBe('1');
      const written = (await api.get('/constituents?pageSize=100')).body.constituents.map((c: any) => c.LastName).sort();
      expect(written).toEqual(['busy0', 'busy1']);
      const retried = await api.post('/constituents/batch', { items }, { headers });
      expect(retried.status, retried.raw).toBe(200);
      expect(retried.body.results.map((x: any) => [x.status, x.constituent.LastName])).toEqual(items.map((b) => [201, b.LastName]));
      expect((await api.get('/constituents?pageSize=100')).body.total).toBe(5);
    } finally {
      t.runtime.services.log = log;
    }
  });
});

describe('a write that keeps losing past its budget', () => {
  const counter: Evolver<number> = { initial: () => 0, evolve: (n) => n + 1 };
  const ctx: WriteContext = { team: 1, source: 'Application', keyName: null, correlationId: 'c', now: new Date('2030-01-01T00:00:00Z') };
  let log: SqliteEventLog;
  afterEach(() => log?.close());

  it('answers 503 record_busy with Retry-After, nothing written, never the raw conflict', async () => {
    log = new SqliteEventLog(':memory:');
    let appends = 0;
    // Another writer lands before every append of this one.
    const losing: EventLog = Object.assign(Object.create(log), {
      append: async (stream: string, _events: unknown, expected: bigint) => {
        appends++;
        throw new WrongExpectedRevision(stream, expected, 0n);
      },
    });
    const started = Date.now();
    const err = await handle(losing, 's-1', counter, ctx, () => [{ type: 'Bumped', data: {} }], { budgetMs: 200 }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('record_busy');
    expect(httpStatus(err)).toBe(503);
    expect(err.retryAfterSeconds).toBe(1);
    // Tried again and again within the budget, with waits between the tries.
    expect(appends).toBeGreaterThan(3);
    expect(Date.now() - started).toBeGreaterThan(100);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await log.readStream('s-1')).toEqual([]);
  });
});

describe('a write\'s instant (decisions.md §10: history and asOf read writes by it)', () => {
  it('stamps a write whose load is slow after its load, so after the write it loaded: history runs forward in time', async () => {
    const team = await t.team([['Integration', 'read_write']]);
    const api = team.api.Integration;
    const c = await api.post('/constituents', { FirstName: 'Ada', LastName: 'Roe' });
    expect(c.status, c.raw).toBe(201);
    const id = c.body.constituent.PkConstituent as number;
    // A is stamped, then its load of the record is slow (held here).
    const held = holdLogCall(t, 'readStream', constituentStream(id));
    const a = api.patch(`/constituents/${id}`, { LastName: 'A' });
    await held.reached;
    await new Promise((r) => setTimeout(r, 30));
    // B is stamped later, loads, and commits before A's load runs.
    const b = await api.patch(`/constituents/${id}`, { LastName: 'B' });
    expect(b.status, b.raw).toBe(200);
    held.release();
    const ra = await a;
    expect(ra.status, ra.raw).toBe(200); // A loaded B's write, so its append did not conflict: no re-stamp
    const h = (await team.admin.get(`/history/constituents/${id}`)).body.events as Array<{ at: string; data: any }>;
    const ats = h.map((e) => e.at);
    // Log order: create, B, A. A's instant must not be before B's (decisions.md §10, asOf).
    expect(ats, JSON.stringify(h.map((e) => [e.at, e.data?.changes?.LastName?.to]))).toEqual([...ats].sort());
  });
});

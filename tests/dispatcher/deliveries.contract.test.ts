import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type Delivery, type DeliveryLog, NOT_SENT, SqliteDeliveryLog, StoreDeliveryLog } from '../../dispatcher/deliveries.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import type { CollectionDef } from '../../projections/store/port.js';

const row = (id: string, over: Partial<Delivery> = {}): Delivery => ({
  id, endpointId: 1, eventId: 'evt_1_1', eventType: 'constituent.created', attempt: 1, status: 'pending',
  responseStatus: null, durationMs: null, error: null, attemptedAt: null, nextAttemptAt: null, ...over,
});

// The embedded adapter, and the one on the shared read store (MongoDB in production; any ReadStore here).
const adapters: Array<[string, () => DeliveryLog]> = [
  ['SqliteDeliveryLog', () => new SqliteDeliveryLog(new Database(':memory:'))],
  ['StoreDeliveryLog', () => new StoreDeliveryLog(new MemoryReadStore())],
];

describe.each(adapters)('the delivery log: %s', (_name, make) => {
  it('never lets a pending row replace an attempt already recorded', async () => {
    const log = make();
    await log.record([row('d1', { status: 'succeeded', responseStatus: 200 })]);
    await log.recordPending([row('d1')]);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).items).toEqual([row('d1', { status: 'succeeded', responseStatus: 200 })]);
  });

  it('replaces a row by id when an attempt is recorded, keeping its place', async () => {
    const log = make();
    await log.recordPending([row('d1'), row('d2')]);
    await log.record([row('d1', { status: 'failed', responseStatus: 500 })]);
    const all = (await log.list(1, undefined, { page: 1, pageSize: 10 })).items;
    expect(all.map((d) => [d.id, d.status])).toEqual([['d2', 'pending'], ['d1', 'failed']]);
  });

  it('lists an endpoint’s rows newest first, filtered by status and paged', async () => {
    const log = make();
    for (let i = 1; i <= 5; i++) await log.record([row(`d${i}`, { status: i % 2 ? 'failed' : 'succeeded' })]);
    await log.record([row('other', { endpointId: 2 })]);
    const failed = await log.list(1, 'failed', { page: 1, pageSize: 2 });
    expect(failed.total).toBe(3);
    expect(failed.items.map((d) => d.id)).toEqual(['d5', 'd3']);
    expect((await log.list(1, 'failed', { page: 2, pageSize: 2 })).items.map((d) => d.id)).toEqual(['d1']);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).total).toBe(5);
  });

  it('finds one attempt by id only under its own endpoint', async () => {
    const log = make();
    await log.record([row('d1', { status: 'succeeded' })]);
    expect(await log.get(1, 'd1')).toEqual(row('d1', { status: 'succeeded' }));
    expect(await log.get(2, 'd1')).toBeNull();
    expect(await log.get(1, 'nope')).toBeNull();
  });

  it('counts attempts per hour from a moment on, leaving out pending rows and other endpoints', async () => {
    const log = make();
    const at = (h: number, m: number) => new Date(Date.UTC(2026, 0, 1, h, m)).toISOString();
    await log.record([
      row('a', { status: 'succeeded', attemptedAt: at(9, 59) }),
      row('b', { status: 'succeeded', attemptedAt: at(10, 0) }),
      row('c', { status: 'failed', attemptedAt: at(10, 30) }),
      row('d', { status: 'abandoned', attemptedAt: at(11, 5) }),
      row('e', { status: 'succeeded', attemptedAt: at(11, 6), endpointId: 2 }),
      row('f', { status: 'pending', nextAttemptAt: at(11, 7) }),
    ]);
    const hours = (await log.hourly(1, Date.parse(at(10, 0)))).sort((x, y) => x.hour - y.hour);
    expect(hours).toEqual([
      { hour: Date.parse(at(10, 0)), succeeded: 1, failed: 1 },
      { hour: Date.parse(at(11, 0)), succeeded: 0, failed: 1 },
    ]);
  });

  it('tells when the run of failures since the last success began (auto-disable, decisions.md 12)', async () => {
    const log = make();
    const at = (h: number) => new Date(Date.UTC(2026, 0, 1, h)).toISOString();
    expect(await log.failingSince(1)).toBeNull();
    await log.record([row('a', { status: 'failed', attemptedAt: at(1) })]);
    await log.record([row('b', { status: 'abandoned', attemptedAt: at(2) })]);
    expect(await log.failingSince(1)).toBe(at(1));
    await log.record([row('c', { status: 'succeeded', attemptedAt: at(3) })]);
    expect(await log.failingSince(1)).toBeNull();
    await log.record([row('d', { status: 'abandoned', attemptedAt: at(4) }), row('e', { status: 'failed', attemptedAt: at(5) })]);
    await log.record([row('other', { endpointId: 2, status: 'failed', attemptedAt: at(0) })]);
    expect(await log.failingSince(1)).toBe(at(4));
    // Counting only the attempts made at or after a moment (an endpoint enabled again then).
    expect(await log.failingSince(1, at(5))).toBe(at(5));
    expect(await log.failingSince(1, at(4))).toBe(at(4));
    expect(await log.failingSince(1, at(6))).toBeNull();
    // A success after the moment still ends the run.
    expect(await log.failingSince(1, at(2))).toBe(at(4));
  });

  it('tells the run by when attempts were made, not by when their rows were written (a row is written when its attempt is queued)', async () => {
    const log = make();
    const at = (h: number) => new Date(Date.UTC(2026, 0, 3, h)).toISOString();
    // Two deliveries queued, the one that will succeed first; the other fails before it succeeds.
    await log.recordPending([row('s'), row('f')]);
    await log.record([row('f', { status: 'failed', attemptedAt: at(1) })]);
    await log.record([row('s', { status: 'succeeded', attemptedAt: at(2) })]);
    expect(await log.failingSince(1)).toBeNull();
    await log.record([row('f2', { status: 'failed', attemptedAt: at(3) })]);
    expect(await log.failingSince(1)).toBe(at(3));
  });

  it("starts no run of failures at an attempt that sent nothing (the operator's to fix: a main key, a queue out of reach)", async () => {
    const log = make();
    const at = (h: number) => new Date(Date.UTC(2026, 0, 2, h)).toISOString();
    await log.record([row('s', { status: 'succeeded', attemptedAt: at(0) })]);
    await log.record([
      row('n1', { status: 'failed', attemptedAt: at(1), error: `${NOT_SENT}the main key does not open this endpoint's secret` }),
      row('n2', { status: 'abandoned', attemptedAt: at(2), error: `${NOT_SENT}its body could not be checked against the team's erasures (NATS is away)` }),
    ]);
    expect(await log.failingSince(1)).toBeNull();
    await log.record([row('r', { status: 'failed', attemptedAt: at(3), error: 'HTTP 500' }), row('n3', { status: 'failed', attemptedAt: at(4), error: `${NOT_SENT}again` })]);
    expect(await log.failingSince(1)).toBe(at(3));
  });
});

describe('the embedded delivery log on disk', () => {
  it('lists a page straight off an index, with or without a status, never sorting the endpoint\'s rows, and counts the hours off one', () => {
    const db = new Database(':memory:');
    const listings: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      // Listings and the hourly counts; a read of one row by id uses the id's own index.
      if (/^SELECT (doc\b|attempted_at)/.test(sql) && !/WHERE id = \?/.test(sql)) listings.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    new SqliteDeliveryLog(db);
    // Two listings, the hourly counts, and the last success (auto-disable).
    expect(listings.length).toBe(4);
    for (const sql of listings) {
      const params = [...sql.matchAll(/\?/g)].map((_, i) => (i === 1 && /status = \?/.test(sql) ? 'failed' : 1));
      const plan = prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((r) => (r as { detail: string }).detail);
      expect(plan.join('; '), sql).toMatch(/USING (COVERING )?INDEX webhook_deliveries_endpoint/);
      // The hourly counts group at most 720 hours in a temporary tree; the rows come off the index.
      if (/^SELECT doc\b/.test(sql)) expect(plan.join('; '), sql).not.toMatch(/TEMP B-TREE/);
    }
  });

  it('prunes rows last written longer ago than the retention period, and keeps the rest', async () => {
    let now = Date.parse('2024-05-01T00:00:00Z');
    const log = new SqliteDeliveryLog(new Database(':memory:'), { retentionDays: 30, now: () => now });
    await log.record([row('old'), row('touched')]);
    now += 20 * 86_400_000;
    await log.record([row('touched', { status: 'failed' }), row('newer')]);
    now += 11 * 86_400_000;
    await log.record([row('today')]);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).items.map((d) => d.id)).toEqual(['today', 'newer', 'touched']);
  });

  it('keeps rows written before retention existed, counting their age from the upgrade', async () => {
    const db = new Database(':memory:');
    db.exec(`CREATE TABLE webhook_deliveries (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, endpoint_id INTEGER NOT NULL, doc TEXT NOT NULL, status TEXT NOT NULL)`);
    db.prepare('INSERT INTO webhook_deliveries (id, endpoint_id, doc, status) VALUES (?, 1, ?, ?)').run('legacy', JSON.stringify(row('legacy')), 'pending');
    let now = Date.now();
    const log = new SqliteDeliveryLog(db, { retentionDays: 1, now: () => now });
    await log.record([row('new')]);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).total).toBe(2);
    now += 2 * 86_400_000;
    await log.record([row('later')]);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).items.map((d) => d.id)).toEqual(['later']);
  });
});

describe('the delivery log on the shared read store', () => {
  it('indexes the listings by endpoint, status and sequence, the hourly counts by endpoint and time, a run of failures by endpoint, status and time, and expires rows after the retention period', async () => {
    const store = new MemoryReadStore();
    const defined: CollectionDef[] = [];
    const define = store.defineCollection.bind(store);
    store.defineCollection = (def) => (defined.push(def), define(def));
    const log = new StoreDeliveryLog(store, { retentionDays: 7 });
    await log.record([row('d1')]);
    expect(defined).toEqual([
      {
        name: 'webhookDeliveries',
        idField: 'id',
        indexes: [
          ['endpointId', '_seq'],
          ['endpointId', 'status', '_seq'],
          ['endpointId', 'attemptedAt'],
          ['endpointId', 'status', 'attemptedAt'],
        ],
        expireAfter: { field: '_recordedAt', seconds: 7 * 86_400 },
      },
    ]);
    expect((await store.get<{ _recordedAt: unknown }>('webhookDeliveries', 'd1'))?._recordedAt).toBeInstanceOf(Date);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).items).toEqual([row('d1')]);
  });
});

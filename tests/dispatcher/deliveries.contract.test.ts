import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type Delivery, type DeliveryLog, SqliteDeliveryLog, StoreDeliveryLog } from '../../dispatcher/deliveries.js';
import { MemoryReadStore } from '../../projections/store/memory.js';

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
});

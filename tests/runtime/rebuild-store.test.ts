import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { CONSTITUENT_FIELDS } from '../../domain/constituent/rules.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Projector } from '../../projections/engine/projector.js';
import { constituentsProjection } from '../../projections/constituents.js';
import { donationsProjection } from '../../projections/donations.js';
import { eq } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { FreshFileStore } from '../../runtime/rebuild-store.js';

describe("the rebuild's store of a file built from nothing", () => {
  it('answers a key it never wrote without asking SQLite, and every key it wrote from SQLite', async () => {
    const core = new SqliteReadCore(':memory:');
    core.define({ name: 'things', idField: 'id' });
    core.define({ name: 'others', idField: 'id' });
    const store = new FreshFileStore(core);
    const asked = vi.spyOn(core, 'get');

    expect(await store.get('things', 1)).toBeNull();
    expect(asked).not.toHaveBeenCalled();

    await store.put('things', { id: 1, n: 1 });
    await store.put('things', { id: 1, n: 2 });
    expect(await store.insertIfAbsent('things', { id: 2, n: 3 })).toBe(true);
    expect(await store.insertIfAbsent('things', { id: 2, n: 4 })).toBe(false);
    // The key as text or number is one key, as in SQLite (sqlite-schema.ts keyOf).
    expect(await store.get('things', '1')).toEqual({ id: 1, n: 2 });
    expect(await store.get('things', 2)).toEqual({ id: 2, n: 3 });
    expect(asked).toHaveBeenCalledTimes(2);
    // Only the text of the same number is the same key: '012' and 12 are two, as in SQLite.
    await store.put('things', { id: 12, n: 6 });
    await store.put('things', { id: '007', n: 7 });
    expect(await store.get('things', '012')).toBeNull();
    expect(await store.get('things', 7)).toBeNull();
    expect(asked).toHaveBeenCalledTimes(2);
    expect(await store.get('things', '12')).toEqual({ id: 12, n: 6 });
    expect(await store.get('things', '007')).toEqual({ id: '007', n: 7 });
    expect(asked).toHaveBeenCalledTimes(4);
    // Another collection's same id was never written there.
    expect(await store.get('others', 1)).toBeNull();
    expect(asked).toHaveBeenCalledTimes(4);
    // A collection the file does not have is an error, never an empty answer.
    await expect(store.get('unknown', 1)).rejects.toThrow('unknown read-model collection unknown');

    await store.remove('things', 1);
    expect(await store.get('things', 1)).toBeNull();
    // A document another write changed is read as it is now.
    await store.updateWhere('things', eq('id', 2), { n: 5 });
    expect(await store.get('things', 2)).toEqual({ id: 2, n: 5 });
    core.close();
  });
});

/** Every row of a collection's table, as stored, in key order. */
const rowsOf = (core: SqliteReadCore, collection: string) => core.db.prepare(`SELECT rowid, * FROM ${core.plan(collection).table} ORDER BY _key`).raw().all();

const fieldValue = fc.oneof(
  { weight: 3, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  { weight: 1, arbitrary: fc.constantFrom('Zoë', 'Łukasz 😀', 'a"b\\c', 'A@Example.ORG', '') },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true }), fc.constant(-0)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);
const names = fc.constantFrom(...Object.keys(CONSTITUENT_FIELDS), 'Unknown', '_private');
const fieldsOf = fc.array(fc.tuple(names, fieldValue), { maxLength: 12 }).map((entries) => Object.fromEntries(entries));

/** One record's events: its creation, then updates, a lock, a deletion or an erasure (the stream's events, stamped or not). */
const history = (category: string, prefix: string) =>
  fc.record({
    created: fieldsOf,
    later: fc.array(fc.oneof(fieldsOf.map((changes) => ({ type: 'Updated', changes })), fc.constantFrom({ type: 'Locked' }, { type: 'Deleted' }, { type: 'Erased' })), { maxLength: 3 }),
    stamped: fc.boolean(),
  }).map(({ created, later, stamped }) => (id: number) => {
    const events: Array<{ stream: string; type: string; data: Record<string, unknown> }> = [{ stream: `${category}-${id}`, type: `${prefix}Created`, data: { id, fields: created } }];
    for (const l of later) {
      if (l.type === 'Erased' && prefix !== 'Constituent') continue;
      events.push({ stream: `${category}-${id}`, type: `${prefix}${l.type}`, data: l.type === 'Updated' ? { id, changes: (l as { changes: unknown }).changes } : { id } });
    }
    return { events, stamped };
  });

/** The events of several records (record i + 1 the i-th), in log order, numbered as the log numbers them. */
function logOf(histories: Array<(id: number) => { events: Array<{ stream: string; type: string; data: Record<string, unknown> }>; stamped: boolean }>): RecordedEvent[] {
  const out: RecordedEvent[] = [];
  for (const [k, history] of histories.entries()) {
    const { events, stamped } = history(k + 1);
    events.forEach((e, i) => {
      const revision = BigInt(i);
      const position = BigInt(out.length + 1);
      const at = new Date(Date.UTC(2026, 10, 27, 9, 0, out.length)).toISOString();
      out.push({ ...e, revision, position: { commit: position, prepare: position }, metadata: { team: 1 + (k % 2), source: 'Public API', keyName: 'K', correlationId: `c${out.length}`, at, ...(stamped ? { revision: i + 1 } : {}) } } as RecordedEvent);
    });
  }
  return out;
}

async function applyAll(projector: Projector, events: RecordedEvent[], make: (core: SqliteReadCore) => SqliteReadStore): Promise<unknown[]> {
  const core = new SqliteReadCore(':memory:');
  try {
    for (const c of projector.collections) core.define({ ...c, version: projector.version });
    const store = make(core);
    for (const e of events) await projector.apply(e as never, store);
    return projector.collections.flatMap((c) => rowsOf(core, c.name));
  } finally {
    core.close();
  }
}

describe("a record's rows written by the rebuild's store", () => {
  it('are the rows the live store writes, for creates of every field type, nulls and unicode, then updates, locks, deletions and erasures', async () => {
    expect(new FreshFileStore(new SqliteReadCore(':memory:')).unsetReadsAsNull).toBe(true);
    for (const [projector, category, prefix] of [
      [constituentsProjection, 'constituent', 'Constituent'],
      [donationsProjection, 'donation', 'Donation'],
    ] as const) {
      await fc.assert(
        fc.asyncProperty(fc.array(history(category, prefix), { minLength: 1, maxLength: 6 }), async (histories) => {
          const events = logOf(histories);
          const live = await applyAll(projector, events, (core) => new SqliteReadStore(core));
          const rebuilt = await applyAll(projector, events, (core) => new FreshFileStore(core));
          expect(rebuilt).toEqual(live);
        }),
        { numRuns: 150 },
      );
    }
  });
});

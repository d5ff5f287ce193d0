import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { CollectionDef, JsonShape } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { PUT_BATCH } from '../../projections/store/sqlite-put-batch.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-put-batch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const things: CollectionDef = { name: 'things', idField: 'id', indexes: [['team']], fields: ['name', 'n'], search: [{ fields: ['name'], where: ['team'] }] };
const notes: CollectionDef = { name: 'notes', idField: 'id', indexes: [['team']] };

type Op =
  | { op: 'put'; collection: 'things' | 'notes'; id: number; name: string | null }
  | { op: 'get'; collection: 'things' | 'notes'; id: number }
  | { op: 'remove'; id: number }
  | { op: 'count' }
  | { op: 'failed'; puts: number[] };

const ops: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    { weight: 12, arbitrary: fc.record({ op: fc.constant('put' as const), collection: fc.constantFrom('things' as const, 'notes' as const), id: fc.integer({ min: 1, max: 90 }), name: fc.option(fc.string({ maxLength: 5 })) }) },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('get' as const), collection: fc.constantFrom('things' as const, 'notes' as const), id: fc.integer({ min: 1, max: 90 }) }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), id: fc.integer({ min: 1, max: 90 }) }) },
    { weight: 1, arbitrary: fc.constant({ op: 'count' as const }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('failed' as const), puts: fc.array(fc.integer({ min: 1, max: 90 }), { maxLength: PUT_BATCH + 5 }) }) },
  ),
  { maxLength: 4 * PUT_BATCH },
);

/** Runs `list` on `core` in one transaction, answering what each read saw. */
function play(core: SqliteReadCore, list: Op[]): unknown[] {
  const seen: unknown[] = [];
  core.transaction(() => {
    for (const o of list) {
      if (o.op === 'put') core.put(o.collection, { id: o.id, team: o.id % 3, name: o.name, n: o.id * 2 });
      else if (o.op === 'get') seen.push(core.get(o.collection, o.id));
      else if (o.op === 'remove') core.remove('things', o.id);
      else if (o.op === 'count') seen.push(core.find({ collection: 'things', page: { page: 1, pageSize: 500 } }).total);
      else
        try {
          // A savepoint that fails: its puts are rolled back, those before it stay.
          core.transaction(() => {
            for (const id of o.puts) core.put('notes', { id: 1000 + id, team: 1 });
            throw new Error('rolled back');
          });
        } catch {
          // expected
        }
    }
  });
  return seen;
}

const rows = (core: SqliteReadCore, table: string) => core.db.prepare(`SELECT rowid, * FROM ${table} ORDER BY rowid`).all();

describe("a fresh file's puts, written a batch to a statement (sqlite-put-batch.ts)", () => {
  it('leave the rows, rowids included, and every read between them as one statement a put does', () => {
    let run = 0;
    fc.assert(
      fc.property(ops, (list) => {
        run++;
        const cores = [new SqliteReadCore(path.join(dir, `plain-${run}.sqlite`)), new SqliteReadCore(path.join(dir, `fresh-${run}.sqlite`), { fresh: true })];
        try {
          for (const core of cores) {
            core.define(things);
            core.define(notes);
          }
          const [plain, fresh] = cores.map((core) => play(core, list));
          expect(fresh).toEqual(plain);
          for (const table of ['"things"', '"notes"']) expect(rows(cores[1], table)).toEqual(rows(cores[0], table));
        } finally {
          for (const core of cores) core.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('are written by the end of the transaction, and none of a transaction rolled back', () => {
    const core = new SqliteReadCore(path.join(dir, 'ends.sqlite'), { fresh: true });
    core.define(notes);
    core.transaction(() => {
      for (let id = 1; id <= PUT_BATCH + 3; id++) core.put('notes', { id, team: 1 });
    });
    const count = () => core.db.prepare('SELECT count(*) FROM "notes"').pluck().get();
    expect(count()).toBe(PUT_BATCH + 3);
    core.begin();
    for (let id = 500; id < 505; id++) core.put('notes', { id, team: 1 });
    core.rollback();
    expect(count()).toBe(PUT_BATCH + 3);
    core.begin();
    core.put('notes', { id: 600, team: 2 });
    core.commit();
    expect(count()).toBe(PUT_BATCH + 4);
    core.close();
  });
});

describe("a fresh file's JSON read (getJson)", () => {
  it('sees the puts batched before it, as on a file written put by put', () => {
    const shape: JsonShape = { fields: ['id', 'team', 'name'], pick: [] };
    for (const fresh of [false, true]) {
      const core = new SqliteReadCore(path.join(dir, `json-${fresh}.sqlite`), { fresh });
      core.define(things);
      core.put('things', { id: 1, team: 1, name: 'a' });
      expect(core.getJson('things', 1, shape)?.json, `fresh: ${fresh}`).toContain('"a"');
      core.put('things', { id: 2, team: 1, name: 'b' });
      expect(core.getJson('things', 2, shape)?.json, `fresh: ${fresh}`).toContain('"b"');
      core.close();
    }
  });
});

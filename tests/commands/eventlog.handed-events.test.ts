import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventMetadata, RecordedEvent } from '../../domain/shared/events.js';
import { jsonGivesBack } from '../../eventlog/json-exact.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';

/*
 * The embedded log hands its followers the appended objects themselves where JSON gives them back
 * as they are, and parses its text back otherwise: either way a follower must get what a fresh read
 * of the log gives, key order included.
 */

const turn = () => new Promise((resolve) => setImmediate(resolve));
async function until(check: () => boolean): Promise<void> {
  while (!check()) await turn();
}

/** The keys of every object in `v`, depth first: equal lists mean the same key order throughout. */
function keyOrder(v: unknown, out: string[] = []): string[] {
  if (v && typeof v === 'object') {
    out.push(Array.isArray(v) ? '[' : `{${Object.keys(v).join('\u0001')}`);
    for (const k of Object.keys(v)) keyOrder((v as Record<string, unknown>)[k], out);
  }
  return out;
}

const meta = (n: number): EventMetadata => ({ team: 1, source: 'Public API', keyName: 'k', correlationId: `c${n}`, at: '2026-11-27T12:00:00.000Z', revision: 1 });

// Values JSON holds as they are (unicode including lone surrogates, nulls, nested arrays, numbers of
// every size) and, less often, ones it does not: undefined, NaN, the infinities and -0 (all from
// fc.double), a hole, a Date, an object of a class or with no prototype.
class Point {
  constructor(readonly x = 1) {}
}
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    { arbitrary: fc.string({ unit: 'grapheme' }), weight: 4 },
    { arbitrary: fc.string({ unit: 'binary' }), weight: 2 },
    { arbitrary: fc.integer(), weight: 2 },
    { arbitrary: fc.double(), weight: 2 },
    { arbitrary: fc.boolean(), weight: 1 },
    { arbitrary: fc.constant(null), weight: 2 },
    { arbitrary: fc.constantFrom(undefined, new Date(0), new Point(), Object.create(null) as object), weight: 1 },
    { arbitrary: fc.array(tie('value'), { maxLength: 4 }), weight: 2 },
    { arbitrary: fc.sparseArray(fc.integer(), { maxLength: 4 }), weight: 1 },
    { arbitrary: fc.dictionary(fc.string({ unit: 'grapheme' }), tie('value'), { maxKeys: 5 }), weight: 3 },
  ),
}));
const eventData = fc.dictionary(fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('0', '7', '10', 'id')), value, { maxKeys: 6, noNullPrototype: true });

describe('the embedded log hands its followers the events it appended', () => {
  let dir: string;
  let log: SqliteEventLog;
  const seen = new Map<string, RecordedEvent[]>();
  let last = 0n;
  let stop: () => Promise<void>;

  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'turnout-handed-'));
    log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
    const sub = log.subscribe(null, (e) => {
      seen.set(e.stream, [...(seen.get(e.stream) ?? []), e]);
      last = e.position.commit;
    });
    stop = () => sub.stop();
  });
  afterAll(async () => {
    await stop();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const appendAndFollow = async (stream: string, data: Array<Record<string, unknown>>) => {
    const r = await log.append(stream, data.map((d, i) => ({ type: 'Generated', data: d, metadata: meta(i) })), 'no_stream');
    await until(() => last >= r.position.commit);
    return { followed: seen.get(stream)!, read: await log.readStream(stream) };
  };

  it('deep-equal, in the same key order, to what a fresh read of the log gives, whatever the data', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(eventData, { minLength: 1, maxLength: 3 }), async (data) => {
        const { followed, read } = await appendAndFollow(`generated-${++n}`, data);
        expect(followed).toStrictEqual(read);
        expect(followed.map((e) => keyOrder(e))).toEqual(read.map((e) => keyOrder(e)));
      }),
      { numRuns: 60 },
    );
  });

  it('the appended objects themselves where JSON gives them back as they are, else the text parsed back', async () => {
    const exact = { id: 1, fields: { FirstName: 'Zoë', Tags: ['a', null, [2.5, -3]], Note: null, '2': 'two' } };
    const odd = [{ id: 2, fields: { FirstName: undefined } }, { id: 3, at: new Date(0) }, { id: 4, n: -0 }, { id: 5, n: NaN }, { id: 6, list: [1, , 3] }];
    const { followed, read } = await appendAndFollow('handed-1', [exact, ...odd]);
    expect(followed).toStrictEqual(read);
    expect(followed[0].data).toBe(exact);
    for (let i = 1; i < followed.length; i++) expect(followed[i].data).not.toBe(odd[i - 1]);
    expect(followed.slice(1).map((e) => e.data)).toStrictEqual([{ id: 2, fields: {} }, { id: 3, at: '1970-01-01T00:00:00.000Z' }, { id: 4, n: 0 }, { id: 5, n: null }, { id: 6, list: [1, null, 3] }]);
  });

  it('tells exact data from the rest', () => {
    expect(jsonGivesBack({ a: [1, 'x', null, { b: true }], c: 1e300, d: -1.5 })).toBe(true);
    for (const v of [undefined, -0, NaN, Infinity, 1n, () => 1, Symbol('s'), new Date(0), new Point(), Object.create(null), new Map(), [1, , 2], { a: { b: [undefined] } }])
      expect(jsonGivesBack({ v })).toBe(false);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonical } from '../../api/idempotency.js';
import { recordWriter } from '../../api/routes/batch.js';

/**
 * The batch route's two texts written in one JSON.stringify each (a record of its answer, the
 * Idempotency-Key's canonical body), against the piece-by-piece writers they replaced: the same
 * text for any value.
 */

/** The canonical text as it was written: keys sorted at every depth, a string per key and value. */
function canonicalByPiece(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalByPiece).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalByPiece((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

/** A record as it was written: field by field, a field whose value is undefined left out. */
function recordByPiece(fields: string[], record: Record<string, unknown>): string {
  let out = '';
  for (const f of fields) {
    const v = record[f];
    if (v === undefined) continue;
    out += `${out ? ',' : ''}${JSON.stringify(f)}:${JSON.stringify(v)}`;
  }
  return `{${out}}`;
}

const key = fc.oneof(fc.string(), fc.constantFrom('__proto__', 'constructor', 'toJSON', '10', '2', 'a"b', '\u{1F600}', '\ud800'));

describe("the batch route's texts", () => {
  it('writes the canonical text of any JSON body as key by key', () => {
    const body = fc.oneof(fc.jsonValue(), fc.array(fc.dictionary(key, fc.oneof(fc.string(), fc.double(), fc.boolean(), fc.constant(null), fc.jsonValue()))));
    fc.assert(
      fc.property(body, (value) => {
        // As a body reaches it: parsed from JSON (a `__proto__` key is then an own field).
        const parsed = JSON.parse(JSON.stringify(value) ?? 'null') as unknown;
        expect(canonical(parsed)).toBe(canonicalByPiece(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('writes a record of the answer as field by field, in the schema order, leaving out undefined', () => {
    const value = fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.double(), fc.boolean(), fc.jsonValue(), fc.date({ noInvalidDate: true }));
    fc.assert(
      fc.property(fc.uniqueArray(key, { maxLength: 12 }), fc.dictionary(key, value), (fields, extra) => {
        const record: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(extra)) Object.defineProperty(record, k, { value: v, enumerable: true, writable: true, configurable: true });
        expect(recordWriter(fields)(record)).toBe(recordByPiece(fields, record));
      }),
      { numRuns: 500 },
    );
  });
});

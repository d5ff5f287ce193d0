import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Doc } from '../../projections/store/port.js';
import { storedSearchText } from '../../projections/store/search-text.js';
import { keptByColumn, planOf, storedDoc, type TablePlan } from '../../projections/store/sqlite-schema.js';

/**
 * storedDoc writes its text without making the object it describes: these compare it with that
 * object as JSON.stringify writes it (the declared fields keyed by place, the rest by name).
 */
function asStringified(plan: TablePlan, doc: Doc): string {
  const kept: Doc = {};
  let rest: Doc | null = null;
  for (const k of Object.keys(doc)) {
    const v = doc[k];
    if (v === undefined) continue;
    const slot = plan.slots?.get(k);
    if (v === null ? slot !== undefined : plan.columns.has(k) && keptByColumn(v)) continue;
    if (!plan.slots) kept[k] = v;
    else if (slot !== undefined) kept[slot] = v;
    else (rest ??= {})[k] = v;
  }
  return JSON.stringify(!plan.slots ? kept : rest ? [kept, rest] : [kept]);
}

const declared = ['Name', 'Email', 'Count', 'Flag', 'Notes', 'When', '_rev'];
const withFields = planOf({ name: 'things', idField: 'id', indexes: [['team'], ['team', 'Email']], fields: declared, search: [{ fields: ['Name', 'Email'], where: ['team'] }] });
const withoutFields = planOf({ name: 'plain', idField: 'id', indexes: [['team']] });

const value = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(null, undefined) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.constant(-0)) },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  // Left out by JSON.stringify, as a key it has nothing to write for.
  { weight: 1, arbitrary: fc.constant(() => 1) },
);
const names = fc.constantFrom(...declared, 'id', 'team', 'Other', '_email1', '__proto__', '7', 'x"y');
const docs = fc
  .array(fc.tuple(names, value), { maxLength: 14 })
  .map((entries) => {
    const doc: Doc = {};
    for (const [k, v] of entries) Object.defineProperty(doc, k, { value: v, enumerable: true, writable: true, configurable: true });
    doc.id ??= 1;
    return doc;
  });

describe('the JSON a stored row keeps of its document (storedDoc)', () => {
  it('is the text JSON.stringify writes for the kept fields, with declared fields or without', () => {
    fc.assert(
      fc.property(docs, (doc) => {
        expect(storedDoc(withFields, doc)).toBe(asStringified(withFields, doc));
        expect(storedDoc(withoutFields, doc)).toBe(asStringified(withoutFields, doc));
      }),
      { numRuns: 500 },
    );
  });
});

/** The stored search text as it was written: two maps and a closure a field. */
function storedSearchTextByMaps(doc: Record<string, unknown>, fields: string[]): string {
  const texts = fields.map((f) => (doc[f] == null ? '' : String(doc[f]).toLowerCase()));
  return texts.map((t, i) => (t && texts.some((u, j) => j !== i && u.length >= t.length && (u.length > t.length || j < i) && u.includes(t)) ? '' : t)).join('\u0001');
}

describe('the search text a stored row keeps (storedSearchText)', () => {
  it('is the text the maps wrote, for any fields and values, one call after another', () => {
    const text = fc.oneof(fc.constantFrom('Ada', 'ada', 'ADA LOVELACE', 'love', '', 'Lovelace'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), { maxLength: 6 }), fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e'), fc.oneof(text, fc.constant(null), fc.integer(), fc.boolean()))), { minLength: 1, maxLength: 4 }),
        (calls) => {
          for (const [fields, doc] of calls) expect(storedSearchText(doc, fields)).toBe(storedSearchTextByMaps(doc, fields));
        },
      ),
      { numRuns: 300 },
    );
  });
});

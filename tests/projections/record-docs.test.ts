import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONSTITUENT_FIELDS } from '../../domain/constituent/rules.js';
import type { LoggedEvent } from '../../domain/events.js';
import { constituentsProjection } from '../../projections/constituents.js';
import { blankDoc, newRecordDoc } from '../../projections/records.js';

/**
 * A created record's document is `Object.assign({}, {every field: null}, fields)`: the same keys
 * in the same order (its stored form and its answer follow that order), own values kept as they
 * are, undefined included, and fields the list does not declare after the declared ones.
 */
const entries = (o: object) => Object.entries(o);

describe("a created record's document", () => {
  const fields = Object.keys(CONSTITUENT_FIELDS);
  const blank = blankDoc(fields);
  const reference = (values: Record<string, unknown>) => Object.assign({}, Object.fromEntries(fields.map((f) => [f, null])), values);

  it('holds what Object.assign over the blank fields holds, in its order', () => {
    const key = fc.oneof(fc.constantFrom(...fields), fc.constantFrom('Extra', 'zeta', 'Alpha', '10', '2'));
    const value = fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(undefined));
    fc.assert(
      fc.property(fc.dictionary(key, value, { maxKeys: 12 }), (values) => {
        const doc = blank(values);
        expect(entries(doc)).toEqual(entries(reference(values)));
        expect(Object.getPrototypeOf(doc)).toBe(Object.prototype);
      }),
      { numRuns: 300 },
    );
  });

  it('is a new object each time, sharing nothing with the values it was made from', () => {
    const values = { FirstName: 'Ada' };
    const a = blank(values);
    a.FirstName = 'changed';
    expect(blank(values).FirstName).toBe('Ada');
    expect(values.FirstName).toBe('Ada');
  });

  it('refuses a field that would read an inherited property', () => {
    expect(() => blankDoc(['FirstName', 'toString'])).toThrow(/toString/);
  });

  it('keeps the key order of the projector document a create answers with', async () => {
    const event = {
      stream: 'constituent-7',
      revision: 0n,
      position: { commit: 3n, prepare: 3n },
      type: 'ConstituentCreated',
      data: { id: 7, fields: { LastName: 'Lovelace', FirstName: 'Ada', Email1: 'ada@example.org' } },
      metadata: { team: 2, source: 'Public API', keyName: 'k', correlationId: 'c', at: '2026-11-27T10:00:00.000Z', revision: 1 },
    } as unknown as LoggedEvent;
    const doc = await newRecordDoc(constituentsProjection, [event]);
    expect(Object.keys(doc!)).toEqual([...fields, 'PkConstituent', 'FkTeam', 'DateCreated', 'DateLastModified', '_email1', '_rev', '_revision']);
    expect(doc).toMatchObject({ FirstName: 'Ada', LastName: 'Lovelace', Nickname: null, PkConstituent: 7, FkTeam: 2, DateCreated: '2026-11-27T10:00:00', _rev: 0, _revision: 1 });
  });
});

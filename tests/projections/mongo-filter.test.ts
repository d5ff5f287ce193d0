import { describe, expect, it } from 'vitest';
import { compileFilter, compileSort, escapeRegex } from '../../projections/store/mongo.js';
import { and, eq, gte, lte, or } from '../../projections/store/port.js';

// What the MongoDB suite checks against a server, checked here on the compiled query alone.
describe('compiling a filter description for MongoDB', () => {
  it('compiles comparisons so that a missing field reads as null', () => {
    // `$eq: null` and `$in: [null]` match a missing field; `$ne: null` excludes it (MongoDB semantics).
    expect(compileFilter(eq('Email', null))).toEqual({ Email: { $eq: null } });
    expect(compileFilter(eq('Team', 1))).toEqual({ Team: { $eq: 1 } });
    expect(compileFilter({ op: 'ne', field: 'Email', value: null })).toEqual({ Email: { $ne: null } });
    expect(compileFilter({ op: 'in', field: 'City', values: ['Lisbon', null] })).toEqual({ City: { $in: ['Lisbon', null] } });
    expect(compileFilter(gte('Score', 7))).toEqual({ Score: { $gte: 7 } });
    expect(compileFilter(lte('Start', '2024-03-01'))).toEqual({ Start: { $lte: '2024-03-01' } });
  });

  it('nests and/or, with an empty and matching all and an empty or matching none', () => {
    expect(compileFilter(and(eq('Team', 1), or(eq('City', 'Porto'), lte('Score', 7))))).toEqual({
      $and: [{ Team: { $eq: 1 } }, { $or: [{ City: { $eq: 'Porto' } }, { Score: { $lte: 7 } }] }],
    });
    expect(compileFilter(and())).toEqual({});
    // MongoDB rejects `$or: []`; every document has an _id, so this matches none.
    expect(compileFilter(or())).toEqual({ _id: { $in: [] } });
  });

  it('compiles contains to the n-gram index\'s candidates, then a case-insensitive literal regex, per field', () => {
    expect(compileFilter({ op: 'contains', fields: ['Name', 'Email'], text: 'a.b' })).toEqual({
      $or: [
        { $and: [{ _ngrams: { $all: ['Name:a.b'] } }, { Name: { $regex: 'a\\.b', $options: 'i' } }] },
        { $and: [{ _ngrams: { $all: ['Email:a.b'] } }, { Email: { $regex: 'a\\.b', $options: 'i' } }] },
      ],
    });
    expect(compileFilter({ op: 'contains', fields: ['Name'], text: '' })).toEqual({});
    expect(compileFilter({ op: 'contains', fields: [], text: 'x' })).toEqual({ _id: { $in: [] } });
    // A field the collection does not index for search is still searched, by the regex alone.
    expect(compileFilter({ op: 'contains', fields: ['Notes'], text: 'abc' }, ['Name'])).toEqual({ Notes: { $regex: 'abc', $options: 'i' } });
  });

  it('escapes search text so that every character is literal', () => {
    const tricky = ['a.b', '(', '(bo)', '.*', '[a-z]', '\\', '^Ana', 'Lima$', 'a+b?', 'x|y', '{1,2}', 'a/b', 'tab\there', 'nul\0byte', 'ünï©ødé 😀'];
    for (const text of tricky) {
      const pattern = escapeRegex(text);
      expect(pattern).not.toContain('\0');
      expect(new RegExp(`^${pattern}$`).test(text)).toBe(true);
      expect(new RegExp(pattern, 'i').test(`prefix ${text.toUpperCase()} suffix`)).toBe(true);
    }
    expect(new RegExp(escapeRegex('a.b')).test('carla.axb')).toBe(false);
    expect(new RegExp(escapeRegex('.*')).test('anything')).toBe(false);
  });

  it('refuses field names MongoDB would read as paths or operators', () => {
    expect(() => compileFilter(eq('a.b', 1))).toThrow(/field name/);
    expect(() => compileFilter(eq('$where', 1))).toThrow(/field name/);
    expect(() => compileSort([{ field: 'x.y', dir: 'asc' }])).toThrow(/field name/);
  });
});

describe('compiling a sort for MongoDB', () => {
  const nullFlag = (field: string) => ({ $cond: [{ $in: [{ $type: `$${field}` }, ['missing', 'null']] }, 1, 0] });

  it('sorts null and missing values last in both directions unless asked otherwise', () => {
    expect(compileSort([{ field: 'City', dir: 'asc' }, { field: 'Score', dir: 'desc' }, { field: 'Start', dir: 'asc', nulls: 'first' }])).toEqual([
      { $addFields: { __null0: nullFlag('City'), __null1: nullFlag('Score'), __null2: nullFlag('Start') } },
      { $sort: { __null0: 1, City: 1, __null1: 1, Score: -1, __null2: -1, Start: 1, _id: 1 } },
    ]);
  });

  it('keeps the keys in order, each flag just before its field, and ends on _id for stable pages', () => {
    const [, { $sort }] = compileSort([{ field: 'B', dir: 'desc' }, { field: 'A', dir: 'asc' }]);
    expect(Object.keys($sort)).toEqual(['__null0', 'B', '__null1', 'A', '_id']);
    expect(compileSort([])).toEqual([{ $sort: { _id: 1 } }]);
  });
});

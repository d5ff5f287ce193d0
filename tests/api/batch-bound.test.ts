import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonBytesBound } from '../../api/routes/batch.js';

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

describe("the batch route's bound of an item's JSON size (api/routes/batch.ts)", () => {
  it('is never under the bytes JSON.stringify writes', () => {
    const values: unknown[] = [
      { FirstName: 'José', LastName: '李', Email1: 'a@b.org', IsEmailOk: true, Age: -1.7976931348623157e308, Zip: '02134', Note: null },
      { ctl: '\u0001\u001f\n"\\', lone: '\ud800x', pair: '😀😀', nested: { list: [1, 'two', [false, null, { deep: 'é' }]] } },
      JSON.parse('{"__proto__": "x", "toJSON": 5, "emptyKey": "", "": ""}'),
      [],
      {},
      // The longest numbers JSON writes: 25 characters (found by the property below; the bound was 24).
      -0.0000010000000008500022,
      -0.0000012345678901234567,
      -1.2345678901234567e-308,
    ];
    for (const v of values) expect(jsonBytesBound(v, Infinity)).toBeGreaterThanOrEqual(bytes(v));
    // Any value JSON.parse can give, control characters and lone surrogates in its strings too.
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }), (v) => {
        const bound = jsonBytesBound(JSON.parse(JSON.stringify(v)), Infinity);
        return bound === Infinity || bound >= bytes(v);
      }),
      { numRuns: 300 },
    );
    // Every finite double, small ones in the decimal form above all (JSON writes -0 as 0).
    fc.assert(fc.property(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.double({ min: -1e-5, max: -1e-6, noNaN: true })), (x) => jsonBytesBound(x, Infinity) >= bytes(x)), { numRuns: 2000 });
  });

  it('gives Infinity past the limit, for other than plain values, and deeper than it looks', () => {
    expect(jsonBytesBound({ text: 'x'.repeat(11_000) }, 64 * 1024)).toBe(Infinity);
    expect(jsonBytesBound({ at: new Date(0) }, 64 * 1024)).toBe(Infinity);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 40; i++) deep = { deep };
    expect(jsonBytesBound(deep, 64 * 1024)).toBe(Infinity);
  });
});

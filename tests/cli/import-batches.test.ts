import { describe, expect, it } from 'vitest';
import { allWritten, batchesOf } from '../../cli/import.js';

/** decisions.md §13: the Idempotency-Key of a batch names its first and last row, so a re-run must cut the same batches. */
describe('cutting an import into batches', () => {
  const rows = (n: number, size = 10) => Array.from({ length: n }, (_, i) => ({ n: i * 2 + 1, body: { LastName: 'x'.repeat(size) } }));

  it('cuts by count, keeping the rows in order with their own numbers', () => {
    const cut = batchesOf(rows(7), 3);
    expect(cut.map((b) => b.map((r) => r.n))).toEqual([
      [1, 3, 5],
      [7, 9, 11],
      [13],
    ]);
  });

  it('cuts by size before the body limit, and the same rows always cut the same', () => {
    const big = rows(5, 400);
    const cut = batchesOf(big, 1000, 1000);
    expect(cut.map((b) => b.length)).toEqual([2, 2, 1]);
    expect(batchesOf(big, 1000, 1000)).toEqual(cut);
  });
});

/** A batch's answer as the batch route writes it (api/routes/batch.ts): one result per item. */
const answer = (...results: object[]) => JSON.stringify({ results });
const written = (id: number, more: object = {}) => ({ status: 201, created: true, constituent: { PkConstituent: id, LastName: 'Lee', ...more } });

describe("reading a batch's answer without parsing it", () => {
  it('takes an answer of one 2xx result per item as every row written', () => {
    expect(allWritten(answer(written(1), { status: 200, created: false, constituent: { PkConstituent: 2 } }, written(3)), 3)).toBe(true);
    // Text that only looks like a result or an error inside a string is escaped there, and not counted.
    expect(allWritten(answer(written(1, { Notes: '{"status":201}' }), written(2)), 2)).toBe(true);
    expect(allWritten(answer(written(1, { Notes: '"error": none' })), 1)).toBe(true);
  });

  it('leaves to the parse any answer with a refused item, too many or too few results, or a nested object that looks like one', () => {
    expect(allWritten(answer(written(1), { status: 400, error: { code: 'invalid_field', message: 'x', field: 'Email1' } }), 2)).toBe(false);
    expect(allWritten(answer(written(1), written(2)), 3)).toBe(false);
    expect(allWritten(answer(written(1), written(2), written(3)), 2)).toBe(false);
    expect(allWritten(answer(written(1, { Extra: { status: 1 } }), written(2)), 2)).toBe(false);
    expect(allWritten('{"error":{"code":"rate_limited","message":"x"}}', 1)).toBe(false);
  });
});

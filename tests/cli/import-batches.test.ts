import { describe, expect, it } from 'vitest';
import { batchesOf } from '../../cli/import.js';

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

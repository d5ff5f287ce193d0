import { describe, expect, it, vi } from 'vitest';
import { SqliteEventLog } from '../../commands/eventlog/sqlite.js';
import { IdAllocator } from '../../commands/ids.js';

describe('allocating ids', () => {
  it('hands out increasing ids and never the same one twice, across allocators sharing a log', async () => {
    const log = new SqliteEventLog(':memory:');
    const a = new IdAllocator(log, 10);
    const b = new IdAllocator(log, 10);
    const ids = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).next('thing')));
    expect(new Set(ids).size).toBe(200);
    expect(Math.min(...ids)).toBeGreaterThanOrEqual(1);
    const later = new IdAllocator(log, 10);
    expect(await later.next('thing')).toBeGreaterThan(Math.max(...ids));
    await log.close();
  });

  it('reads the id stream only when it does not know its tail', async () => {
    const log = new SqliteEventLog(':memory:');
    const ids = new IdAllocator(log, 5);
    const reads = vi.spyOn(log, 'readStream');
    for (let i = 0; i < 50; i++) await ids.next('thing');
    expect(reads).toHaveBeenCalledTimes(1);
    await log.close();
  });
});

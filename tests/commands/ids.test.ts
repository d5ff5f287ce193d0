import { describe, expect, it, vi } from 'vitest';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
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

  it('reads only the id stream\'s last event to find where a fresh process starts, however long the stream', async () => {
    const log = new SqliteEventLog(':memory:');
    const first = new IdAllocator(log, 1);
    for (let i = 0; i < 300; i++) await first.next('thing');
    let eventsRead = 0;
    const counted = Object.create(log) as SqliteEventLog;
    counted.readStream = async (s) => tally(await log.readStream(s));
    counted.readStreamBackwards = async (s, n) => tally(await log.readStreamBackwards(s, n));
    const tally = <T extends unknown[]>(events: T) => ((eventsRead += events.length), events);
    expect(await new IdAllocator(counted, 1).next('thing')).toBe(301);
    expect(eventsRead).toBe(1);
    await log.close();
  });

  it('reserves ids ahead for a batch in one append, then hands them out without another', async () => {
    const log = new SqliteEventLog(':memory:');
    const ids = new IdAllocator(log, 10);
    expect(await ids.next('thing')).toBe(1);
    const appends = vi.spyOn(log, 'append');
    await ids.reserveAhead('thing', 250);
    const got = [];
    for (let i = 0; i < 250; i++) got.push(await ids.next('thing'));
    expect(got).toEqual(Array.from({ length: 250 }, (_, i) => i + 2));
    // The batch's reservation, and the next block's, reserved as the last few ids went out.
    expect(appends).toHaveBeenCalledTimes(2);
    expect(appends.mock.calls[1][1][0].data).toEqual({ kind: 'thing', from: 252, to: 261 });
    await log.close();
  });

  it('reserves ids ahead for each of two batches at once, not one reservation both run out of midway', async () => {
    const log = new SqliteEventLog(':memory:');
    const ids = new IdAllocator(log, 10);
    const appends = vi.spyOn(log, 'append');
    const [a, b] = await Promise.all([ids.reserveAhead('thing', 250), ids.reserveAhead('thing', 250)]);
    const reserved = () => appends.mock.calls.reduce((n, c) => n + (c[1][0].data as { from: number; to: number }).to - (c[1][0].data as { from: number }).from + 1, 0);
    expect(reserved()).toBeGreaterThanOrEqual(500);
    // Each batch takes its 250 (counted off its claim) with no reservation to wait for midway.
    const before = appends.mock.calls.length;
    for (let i = 0; i < 250; i++) {
      await ids.next('thing');
      a.left--;
      await ids.next('thing');
      b.left--;
    }
    expect(appends.mock.calls.slice(before).length).toBeLessThanOrEqual(1);
    a.done();
    b.done();
    // Done, a claim is owed nothing: the next reservation counts only what is left.
    await ids.reserveAhead('thing', 5);
    await log.close();
  });

  it('reserves the next block while half of the current one is left, so no write waits for it', async () => {
    const log = new SqliteEventLog(':memory:');
    const ids = new IdAllocator(log, 8);
    const appends = vi.spyOn(log, 'append');
    for (let i = 0; i < 3; i++) await ids.next('thing');
    expect(appends).toHaveBeenCalledTimes(1);
    // Four of eight left: the next block is asked for now, once, not when the block runs out.
    expect(await ids.next('thing')).toBe(4);
    expect(await ids.next('thing')).toBe(5);
    expect(appends).toHaveBeenCalledTimes(2);
    await vi.waitFor(async () => expect((await log.readStream('ids-thing')).length).toBe(2));
    const got = [];
    for (let i = 0; i < 9; i++) got.push(await ids.next('thing'));
    expect(got).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14]);
    expect(appends).toHaveBeenCalledTimes(3);
    await log.close();
  });

  it('reads the id stream only when it does not know its tail', async () => {
    const log = new SqliteEventLog(':memory:');
    const ids = new IdAllocator(log, 5);
    const reads = vi.spyOn(log, 'readStreamBackwards');
    for (let i = 0; i < 50; i++) await ids.next('thing');
    expect(reads).toHaveBeenCalledTimes(1);
    await log.close();
  });
});

describe('deciding on a stream named by a new id', () => {
  it('does not read it, and still refuses to append to one that exists', async () => {
    const { handle } = await import('../../commands/aggregate.js');
    const log = new SqliteEventLog(':memory:');
    const ctx = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', now: new Date() };
    const evolver = { initial: () => 0, evolve: (n: number) => n + 1 };
    const reads = vi.spyOn(log, 'readStream');
    const fresh = await handle(log, 'thing-1', evolver, ctx, () => [{ type: 'Made', data: {} }], { newStream: true });
    expect(fresh.revision).toBe(0n);
    expect(reads).not.toHaveBeenCalled();
    // Were the id reused after all, the NO_STREAM append conflicts and the decision is made on the real state.
    const again = await handle(log, 'thing-1', evolver, ctx, (n) => (n === 0 ? [{ type: 'Made', data: {} }] : []), { newStream: true });
    expect(again.events).toEqual([]);
    expect(reads).toHaveBeenCalledTimes(1);
    await log.close();
  });
});

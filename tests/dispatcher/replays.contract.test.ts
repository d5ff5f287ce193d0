import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type Replay, type ReplayStore, SqliteReplayStore, StoreReplayStore } from '../../dispatcher/replays.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';

const job = (id: string, over: Partial<Replay> = {}): Replay => ({
  id, team: 1, endpointId: 2, from: '2026-01-01T00:00:00Z', to: null, types: null, status: 'running',
  queued: 0, sent: 0, failed: 0, next: 'c', exhausted: false, error: null, createdAt: '2026-01-01T00:00:00.000Z', ...over,
});

// The embedded adapter, and the one on the shared read store (MongoDB in production; any ReadStore here).
const adapters: Array<[string, () => ReplayStore]> = [
  ['SqliteReplayStore', () => new SqliteReplayStore(new Database(':memory:'))],
  ['StoreReplayStore', () => new StoreReplayStore(new MemoryReadStore())],
];

describe.each(adapters)('the replay store: %s', (_name, make) => {
  it('keeps a job, its progress and the workers\u2019 counts apart, so saving progress never loses a count', async () => {
    const s = make();
    await s.create(job('r1'));
    await s.settled('r1', 't1', true);
    await s.save({ id: 'r1', status: 'running', queued: 3, next: 'c2', exhausted: true, error: null });
    await s.settled('r1', 't2', false);
    await s.settled('r1', 't3', true);
    expect(await s.get('r1')).toEqual(job('r1', { queued: 3, next: 'c2', exhausted: true, sent: 2, failed: 1 }));
    expect(await s.get('nope')).toBeNull();
  });

  it('lists the running jobs, oldest first', async () => {
    const s = make();
    await s.create(job('a', { createdAt: '2026-01-01T00:00:00.000Z' }));
    await s.create(job('b', { createdAt: '2026-01-01T00:00:01.000Z' }));
    await s.create(job('c', { createdAt: '2026-01-01T00:00:02.000Z' }));
    await s.save({ id: 'b', status: 'done', queued: 0, next: 'c', exhausted: true, error: null });
    expect((await s.running()).map((r) => r.id)).toEqual(['a', 'c']);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Position, RecordedEvent } from '../../domain/shared/events.js';
import { ANY, type NewEvent } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Projector } from '../../projections/engine/projector.js';
import { checkpointName, ProjectionFailure, ProjectionStep, versionedCheckpointName } from '../../projections/engine/step.js';
import type { ReadStore } from '../../projections/store/port.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
const recorded = (n: number, stream: string, type = 'Something'): RecordedEvent => ({
  stream,
  type,
  revision: 0n,
  position: at(n),
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

/** A projector writing one document per event it applies, failing the events `fails` names. */
function writer(name: string, fails: (e: RecordedEvent) => boolean = () => false): Projector & { seen: bigint[] } {
  const seen: bigint[] = [];
  return {
    name,
    version: 1,
    seen,
    collections: [{ name, idField: 'id' }],
    async apply(e, store) {
      if (fails(e as unknown as RecordedEvent)) throw new Error(`${name} refused ${e.stream}`);
      seen.push(e.position.commit);
      await store.put(name, { id: String(e.position.commit) });
    },
  };
}

const stores: Array<[string, () => ReadStore]> = [
  ['SQLite (a transaction per step)', () => new SqliteReadStore(':memory:')],
  ['the memory store (no transactions)', () => new MemoryReadStore()],
];

describe.each(stores)('the projection step over %s', (_, open) => {
  it('keeps a checkpoint per projector and gives each only the events past its own', async () => {
    const store = open();
    const a = writer('a');
    const b = writer('b');
    for (const c of [...a.collections, ...b.collections]) await store.defineCollection(c);
    // b was built further than a (a read model rebuilt while the other stayed, say).
    await store.setCheckpoint(checkpointName(b), at(2));
    const step = new ProjectionStep([a, b]);
    await step.run(store, async (s, transaction) => {
      await step.load(s);
      expect(step.lowest()).toEqual({ commit: 0n, prepare: 0n });
      await step.apply([recorded(1, 'x-1'), recorded(2, 'x-2'), recorded(3, 'x-3')], s);
      step.advance(at(3));
      await step.save(s);
      if (!transaction) step.settle();
    });
    expect(a.seen).toEqual([1n, 2n, 3n]);
    expect(b.seen).toEqual([3n]);
    expect(await store.getCheckpoint(checkpointName(a))).toEqual(at(3));
    expect(await store.getCheckpoint(checkpointName(b))).toEqual(at(3));
  });

  it('answers a projector that throws with the event, the projector and how many events of the chunk came before', async () => {
    const store = open();
    const a = writer('a', (e) => e.stream === 'x-2');
    for (const c of a.collections) await store.defineCollection(c);
    const step = new ProjectionStep([a]);
    await step.load(store);
    const failure = await step.apply([recorded(1, 'x-1'), recorded(2, 'x-2')], store).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ProjectionFailure);
    expect(failure).toMatchObject({ projector: 'a', index: 1, event: { stream: 'x-2' } });
  });
});

describe('the projection step in a transaction', () => {
  it('rolls back every write of a failed step and leaves the checkpoints where they were', async () => {
    const store = new SqliteReadStore(':memory:');
    const a = writer('a');
    const b = writer('b', (e) => e.stream === 'x-2');
    for (const c of [...a.collections, ...b.collections]) await store.defineCollection(c);
    const step = new ProjectionStep([a, b]);
    const failed = step.run(store, async (s) => {
      await step.load(s);
      await step.apply([recorded(1, 'x-1'), recorded(2, 'x-2')], s);
    });
    await expect(failed).rejects.toBeInstanceOf(ProjectionFailure);
    // a applied both events and b the first before b threw: none of it stands.
    expect(a.seen).toEqual([1n, 2n]);
    expect((await store.find({ collection: 'a' })).total).toBe(0);
    expect((await store.find({ collection: 'b' })).total).toBe(0);
    expect(await store.getCheckpoint(checkpointName(a))).toBeNull();
    expect(step.lowest()).toEqual({ commit: 0n, prepare: 0n });
  });
});

const event = (type: string): NewEvent => ({
  type,
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

describe('the main-thread driver over a store with transactions', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closing.splice(0)) await c();
  });

  it('stores each projector\'s checkpoint and the summary in every chunk\'s transaction, and resumes each projector from its own', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new SqliteReadStore(':memory:');
    closing.push(() => log.close());
    const a = writer('a');
    const first = new ProjectionRunner(log, store, [a]);
    await first.start();
    const one = (await log.append('x-1', [event('Something')], ANY)).position;
    await first.waitFor(one);
    // Committed with the chunk, not left to a later batch.
    expect(await store.getCheckpoint(versionedCheckpointName(a))).toEqual(one);
    expect(await store.getCheckpoint('read-models')).toEqual(one);
    await first.stop();

    // A projector new to the store starts from its own beginning, the other where it was.
    const two = (await log.append('x-2', [event('Something')], ANY)).position;
    
    const again = writer('a');
    const b = writer('b');
    const second = new ProjectionRunner(log, store, [again, b]);
    closing.push(() => second.stop());
    await second.start();
    await second.waitFor(two);
    expect(again.seen).toEqual([two.commit]);
    expect(b.seen).toEqual([one.commit, two.commit]);
    expect(await store.getCheckpoint('read-models')).toEqual(two);
  });

  it('applies the events before a failing one, rolls the failing one back and retries it until it applies', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new SqliteReadStore(':memory:');
    let broken = true;
    const a = writer('a');
    const b = writer('b', (e) => broken && e.stream === 'x-2');
    const runner = new ProjectionRunner(log, store, [a, b], { retryInitialMs: 2, retryMaxMs: 10 });
    closing.push(async () => {
      await runner.stop();
      await log.close();
    });
    await runner.start();
    const results = await Promise.all(['x-1', 'x-2', 'x-3'].map((s) => log.append(s, [event('Something')], ANY)));
    const [one, two, three] = results.map((r) => r.position);
    await runner.waitFor(one);
    await vi.waitFor(async () => expect((await runner.status()).state).toBe('failed'));
    expect(await store.getCheckpoint(versionedCheckpointName(b))).toEqual(one);
    // a's write of x-2 went with b's failure: it is not in the store.
    expect(await store.get('a', String(two.commit))).toBeNull();
    broken = false;
    await runner.waitFor(three);
    expect((await store.find({ collection: 'b', sort: [{ field: 'id', dir: 'asc' }] })).items.map((d) => d.id)).toEqual([one, two, three].map((p) => String(p.commit)));
    expect(await store.getCheckpoint(versionedCheckpointName(a))).toEqual(three);
  });
});

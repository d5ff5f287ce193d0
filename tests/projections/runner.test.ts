import type { Category } from '../../domain/events.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ANY, type EventLog, type NewEvent, type SubscribeOptions, type Subscription } from '../../eventlog/port.js';
import { type Position, type RecordedEvent } from '../../domain/shared/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { projectors } from '../../projections/index.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Projector } from '../../projections/engine/projector.js';
import { constituentsProjection } from '../../projections/constituents.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { until } from '../commands/eventlog.contract.js';

const event = (type: string): NewEvent => ({
  type,
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

/** A projector that records the streams it was given. */
function recorder(name: string, categories?: Category[]): Projector & { seen: string[] } {
  const seen: string[] = [];
  return { name, version: 1, collections: [], categories, seen, apply: async (e: RecordedEvent) => void seen.push(e.stream) };
}

describe('the projection runner', () => {
  it('gives a projector only the events of the stream categories it reads, and every event to one that names none', async () => {
    const log = new SqliteEventLog(':memory:');
    const constituents = recorder('constituents', ['constituent']);
    const following = recorder('tasks', ['volunteer_task', 'constituent']);
    const everything = recorder('everything');
    const runner = new ProjectionRunner(log, new MemoryReadStore(), [constituents, following, everything]);
    closing.push(async () => {
      await runner.stop();
      await log.close();
    });
    await runner.start();
    // `constituent_email-…` is a category of its own, not `constituent`: a claim stream is not a record.
    const streams = ['constituent-1', 'volunteer_task-2', 'constituent_email-1-abc', 'ids-constituent', 'constituent-3', 'team'];
    let last = null;
    for (const s of streams) last = (await log.append(s, [event('Something')], ANY)).position;
    await runner.waitFor(last!);

    expect(constituents.seen).toEqual(['constituent-1', 'constituent-3']);
    expect(following.seen).toEqual(['constituent-1', 'volunteer_task-2', 'constituent-3']);
    expect(everything.seen).toEqual(streams);
  });

  it('routes every event the read models are built from: each category written by the domain reaches its projector', () => {
    // The categories the product's projectors read, against the stream names the domain writes.
    const read = new Set(projectors.flatMap((p) => p.categories ?? []));
    for (const category of ['team', 'constituent', 'lookup', 'donation', 'recurring_gift', 'webhook_endpoint', 'event', 'event_ticket', 'volunteer', 'volunteer_task_group', 'volunteer_task', 'notification'])
      expect(read, category).toContain(category);
  });
});

/** The embedded log, with a switch that drops its subscription and refuses new ones while down. */
function flakyLog(inner: SqliteEventLog) {
  let down = false;
  const froms: Array<Position | null> = [];
  let current: { sub: Subscription; options: SubscribeOptions } | null = null;
  const log: EventLog & { fail(err: Error): Promise<void>; recover(): void; froms: typeof froms } = Object.assign(Object.create(inner) as EventLog, {
    froms,
    subscribe(from: Position | null, handler: (e: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
      froms.push(from);
      if (down) {
        // As the embedded log does when its first read fails: at once, inside subscribe().
        options.onError?.(new Error('log unreachable'));
        return { stop: async () => {} };
      }
      const sub = inner.subscribe(from, handler, options);
      current = { sub, options };
      return sub;
    },
    async fail(err: Error) {
      down = true;
      const c = current!;
      await c.sub.stop();
      c.options.onError?.(err);
    },
    recover() {
      down = false;
    },
  });
  return log;
}

describe('the projection runner when something fails', () => {
  it('retries an event that fails to apply, never moving the checkpoint past it, and reports failed until it applies', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new MemoryReadStore();
    let broken = true;
    let attempts = 0;
    const applied: string[] = [];
    const fragile: Projector = {
      name: 'fragile',
      version: 1,
      collections: [],
      apply: async (e) => {
        if (e.stream === 'constituent-2' && broken) {
          attempts++;
          throw new Error('read store refused the write');
        }
        applied.push(e.stream);
      },
    };
    const reports: string[] = [];
    const errors: unknown[] = [];
    const runner = new ProjectionRunner(log, store, [fragile], {
      retryInitialMs: 2,
      retryMaxMs: 10,
      checkpointEvery: 1,
      report: (m) => void reports.push(m),
      onError: (e) => void errors.push(e),
    });
    closing.push(async () => {
      await runner.stop();
      await log.close();
    });
    await runner.start();
    const first = (await log.append('constituent-1', [event('Created')], ANY)).position;
    await log.append('constituent-2', [event('Created')], ANY);
    const last = (await log.append('constituent-3', [event('Created')], ANY)).position;
    await until('several failed attempts', () => attempts >= 3);

    // Before: the error was counted and the checkpoint moved on past the event, for good.
    expect((await runner.status()).state).toBe('failed');
    expect(await store.getCheckpoint('read-models')).toEqual(first);
    expect(applied).toEqual(['constituent-1']);
    expect(errors.length).toBe(attempts);
    expect(reports.some((m) => /constituent-2.*read store refused the write.*retrying/.test(m))).toBe(true);

    broken = false;
    await runner.waitFor(last);
    expect(applied).toEqual(['constituent-1', 'constituent-2', 'constituent-3']);
    await vi.waitFor(async () => expect((await runner.status()).behind).toBe(0));
    expect(await runner.status()).toEqual({ name: 'read-models', state: 'caught_up', behind: 0 });
    await vi.waitFor(async () => expect(await store.getCheckpoint('read-models')).toEqual(last));
  });

  it('resubscribes from the stored checkpoint after losing the log, reporting each attempt, and is reconnecting meanwhile', async () => {
    const inner = new SqliteEventLog(':memory:');
    const log = flakyLog(inner);
    const store = new MemoryReadStore();
    const seen = recorder('everything');
    const reports: string[] = [];
    const runner = new ProjectionRunner(log, store, [seen], { retryInitialMs: 2, retryMaxMs: 10, report: (m) => void reports.push(m) });
    closing.push(async () => {
      await runner.stop();
      await inner.close();
    });
    await runner.start();
    const first = (await log.append('constituent-1', [event('Created')], ANY)).position;
    await runner.waitFor(first);
    expect((await runner.status()).state).toBe('caught_up');

    await log.fail(new Error('connection reset'));
    await until('several attempts to resubscribe', () => log.froms.length >= 4);
    expect((await runner.status()).state).toBe('reconnecting');
    expect(reports.filter((m) => /read-models: .*resubscribing from the last checkpoint/.test(m)).length).toBeGreaterThanOrEqual(3);

    log.recover();
    const next = (await log.append('constituent-2', [event('Created')], ANY)).position;
    await runner.waitFor(next);
    expect(log.froms.at(-1)).toEqual(first);
    expect(seen.seen).toEqual(['constituent-1', 'constituent-2']);
    expect((await runner.status()).state).toBe('caught_up');
  });
});

/** A memory store that counts checkpoint writes and, once "crashed", loses them. */
class CountingStore extends MemoryReadStore {
  checkpointWrites = 0;
  crashed = false;
  override async setCheckpoint(name: string, position: Position): Promise<void> {
    this.checkpointWrites++;
    if (!this.crashed) await super.setCheckpoint(name, position);
  }
}

const things = constituentsProjection as unknown as Projector;
const thing = (type: string, data: Record<string, unknown>): NewEvent => ({ ...event(type), data: { id: 1, ...data } });

describe('storing the projection checkpoint', () => {
  it('stores it once per batch of events, not once per event', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new CountingStore();
    const runner = new ProjectionRunner(log, store, [recorder('everything')]);
    closing.push(async () => {
      await runner.stop();
      await log.close();
    });
    await runner.start();
    const appends = Array.from({ length: 200 }, (_, i) => log.append(`thing-${i}`, [event('Something')], ANY));
    const last = (await Promise.all(appends)).at(-1)!.position;
    await runner.waitFor(last);
    await vi.waitFor(async () => expect(await store.getCheckpoint('read-models')).toEqual(last));
    // Before: 200 writes, one per event.
    expect(store.checkpointWrites).toBeLessThanOrEqual(10);
  });

  it('applies again, after a restart, what the lost checkpoint covered, changing nothing (the _rev guard)', async () => {
    const log = new SqliteEventLog(':memory:');
    const store = new CountingStore();
    closing.push(() => log.close());
    const applied: bigint[] = [];
    const counted: Projector = { ...things, apply: async (e, s) => (applied.push(e.revision), things.apply(e, s)) };
    const first = new ProjectionRunner(log, store, [counted]);
    await first.start();
    const created = (await log.append('constituent-1', [thing('ConstituentCreated', { fields: { FirstName: 'first' } })], ANY)).position;
    await first.waitFor(created);
    await vi.waitFor(async () => expect(await store.getCheckpoint('read-models')).toEqual(created));
    // The process dies before the checkpoint of the next batch is stored.
    store.crashed = true;
    const renamed = (await log.append('constituent-1', [thing('ConstituentUpdated', { changes: { FirstName: 'second' } })], ANY)).position;
    const again = (await log.append('constituent-1', [thing('ConstituentUpdated', { changes: { FirstName: 'third' } })], ANY)).position;
    await first.waitFor(again);
    await first.stop();
    expect(await store.getCheckpoint('read-models')).toEqual(created);
    expect(renamed).toBeDefined();

    store.crashed = false;
    const second = new ProjectionRunner(log, store, [counted]);
    closing.push(() => second.stop());
    await second.start();
    await second.waitFor(again);
    // Both updates were applied twice; the document is as the log says, once.
    expect(applied).toEqual([0n, 1n, 2n, 1n, 2n]);
    expect(await store.get('constituents', 1)).toMatchObject({ PkConstituent: 1, FirstName: 'third', _rev: 2 });
    expect((await store.find({ collection: 'constituents' })).total).toBe(1);
  });
});

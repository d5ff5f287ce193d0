import { ANY, type EventLog, type NewEvent } from '../../eventlog/port.js';
import type { Position } from '../../domain/shared/events.js';
import type { Projector } from '../../projections/engine/projector.js';
import type { Lease } from '../../projections/lease.js';
import type { ReadStore } from '../../projections/store/port.js';

/**
 * Leases by name, each shared by its contenders, honouring its TTL by this process's clock as a
 * lease store would; `cut(me)`: the store stops answering that contender and what it held lapses
 * at once; `partition(me)`: it stops answering, and what it held lapses at its TTL.
 */
export function leaseStore(ttlMs: number) {
  const held = new Map<string, { holder: string; expiresAt: number }>();
  const cut = new Set<string>();
  const parted = new Set<string>();
  const contender =
    (me: string) =>
    (name: string): Lease => ({
      ttlMs,
      async acquire() {
        if (cut.has(me)) return false;
        if (parted.has(me)) return false;
        const now = Date.now();
        const state = held.get(name);
        if (state && state.holder !== me && state.expiresAt > now) return false;
        held.set(name, { holder: me, expiresAt: now + ttlMs });
        return true;
      },
      async release() {
        if (held.get(name)?.holder === me) held.delete(name);
      },
    });
  return {
    contender,
    holder: (name: string) => held.get(name)?.holder ?? null,
    cut: (me: string) => {
      cut.add(me);
      for (const [k, v] of held) if (v.holder === me) held.delete(k);
    },
    /** Its renewals fail from now on; what it held lapses at its TTL, as a lease store's entries do. */
    partition: (me: string) => void parted.add(me),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A read-modify-write projector, as the outbox's NotificationSent (attempts + 1): applied twice,
 * it counts twice. Its collection carries the version, as MongoDB's names do (the memory store
 * keeps one collection a name); `delayMs`: a slow write.
 */
export function tally(name: string, version: number, delayMs = 0): Projector {
  const collection = `${name}_v${version}`;
  return {
    name,
    version,
    collections: [{ name: collection, idField: 'id' }],
    async apply(_e: unknown, store: ReadStore) {
      if (delayMs) await sleep(delayMs);
      const d = await store.get<{ n: number }>(collection, 'n');
      await store.put(collection, { id: 'n', n: (d?.n ?? 0) + 1 });
    },
  };
}

/**
 * A projector that throws on every `Poison` event while `fails()` says so (each call is a try),
 * and applies every other event, writing nothing.
 */
export function failingOnPoison(name: string, fails: () => boolean = () => true): Projector {
  return {
    name,
    version: 1,
    collections: [{ name: `${name}_v1`, idField: 'id' }],
    async apply(e: unknown) {
      if ((e as { type: string }).type === 'Poison' && fails()) throw new Error('cannot apply');
    },
  };
}

export const count = async (store: ReadStore, collection: string) => (await store.get<{ n: number }>(collection, 'n'))?.n ?? 0;

/** An event of no stream category any real projector reads, team 1, for the runner's tests. */
export const event = (type: string): NewEvent => ({
  type,
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

/** Appends one event a stream, `thing-<from>` to `thing-<to - 1>`, and answers the last one's position. */
export const appender =
  (log: EventLog) =>
  async (from: number, to: number): Promise<Position> => {
    let last: Position | null = null;
    for (let i = from; i < to; i++) last = (await log.append(`thing-${i}`, [event('Something')], ANY)).position;
    return last!;
  };

/** The log as EventStoreDB delivers without a filter: its subscriptions never report a checkpoint. */
export function withoutCheckpoints(log: EventLog): EventLog {
  return new Proxy(log, {
    get(t, k, r) {
      if (k === 'subscribe') return (from: never, handler: never, options: { onCheckpoint?: unknown } = {}) => t.subscribe(from, handler, { ...options, onCheckpoint: undefined });
      const v = Reflect.get(t, k, r);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ANY, type EventLog, type NewEvent, NO_STREAM, type SubscribeOptions, type Subscription, WrongExpectedRevision } from '../../eventlog/port.js';
import { comparePositions, type Position, type RecordedEvent } from '../../domain/shared/events.js';

export interface LogUnderTest {
  log: EventLog;
  cleanup(): Promise<void>;
}

export interface EventLogContractOptions {
  /** Every test shares one log (a server started once per suite): checks of an empty log are skipped. */
  shared?: boolean;
}

const metadata = { team: 7, source: 'Application', keyName: null, correlationId: 'corr-1', at: '2024-05-01T12:00:00.000Z' } as const;
const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({ type, data, metadata: { ...metadata } });
/** Streams and types are unique per test, so a log shared by the whole suite does not mix them up. */
const unique = (prefix: string) => `${prefix}-${randomUUID().replaceAll('-', '')}`;

export async function until(what: string, condition: () => boolean, timeout = 10_000): Promise<void> {
  await vi.waitFor(
    () => {
      if (!condition()) throw new Error(`timed out waiting until ${what}`);
    },
    { timeout, interval: 5 },
  );
}

async function refusal(p: Promise<unknown>): Promise<WrongExpectedRevision> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WrongExpectedRevision);
  return err as WrongExpectedRevision;
}

/** The behaviour every EventLog adapter owes the command side and the projections. */
export function eventLogContract(name: string, makeLog: () => Promise<LogUnderTest>, options: EventLogContractOptions = {}): void {
  describe(`${name}: the event log contract`, () => {
    let log: EventLog;
    let cleanup: () => Promise<void>;
    let subscriptions: Subscription[] = [];

    beforeEach(async () => {
      ({ log, cleanup } = await makeLog());
    });
    afterEach(async () => {
      for (const s of subscriptions) await s.stop();
      subscriptions = [];
      await cleanup();
    });

    /** Subscribes and records what arrives, so tests wait on conditions rather than time. */
    function follow(from: Position | null, opts: SubscribeOptions = {}, onEvent?: (e: RecordedEvent) => Promise<void> | void) {
      const seen: RecordedEvent[] = [];
      const sub = log.subscribe(
        from,
        async (e) => {
          seen.push(e);
          await onEvent?.(e);
        },
        opts,
      );
      subscriptions.push(sub);
      return { seen, sub, of: (stream: string) => seen.filter((e) => e.stream === stream) };
    }

    describe('appending', () => {
      it('creates a stream with NO_STREAM and numbers its events from 0', async () => {
        const s = unique('cart');
        const r = await log.append(s, [event('Opened', { by: 'ana' })], NO_STREAM);
        expect(r.nextExpectedRevision).toBe(0n);
        const [e] = await log.readStream(s);
        expect(e).toMatchObject({ stream: s, revision: 0n, type: 'Opened', data: { by: 'ana' }, metadata });
      });

      it('refuses NO_STREAM on a stream that exists, naming its revision', async () => {
        const s = unique('cart');
        await log.append(s, [event('Opened'), event('Renamed')], NO_STREAM);
        const err = await refusal(log.append(s, [event('Opened')], NO_STREAM));
        expect(err).toMatchObject({ stream: s, expected: NO_STREAM, actual: 1n });
      });

      it('appends at the exact revision and refuses a stale one with the actual revision', async () => {
        const s = unique('cart');
        await log.append(s, [event('Opened')], NO_STREAM);
        expect((await log.append(s, [event('Renamed')], 0n)).nextExpectedRevision).toBe(1n);
        const err = await refusal(log.append(s, [event('Renamed')], 0n));
        expect(err).toMatchObject({ expected: 0n, actual: 1n });
      });

      it('refuses an exact revision on a missing stream with actual null', async () => {
        const err = await refusal(log.append(unique('cart'), [event('Renamed')], 0n));
        expect(err.actual).toBeNull();
      });

      it('appends with ANY whether or not the stream exists', async () => {
        const s = unique('cart');
        expect((await log.append(s, [event('Opened')], ANY)).nextExpectedRevision).toBe(0n);
        expect((await log.append(s, [event('Renamed')], ANY)).nextExpectedRevision).toBe(1n);
      });

      it('writes a multi-event append whole, with consecutive revisions, or not at all', async () => {
        const s = unique('cart');
        const r = await log.append(s, [event('A'), event('B'), event('C')], NO_STREAM);
        expect(r.nextExpectedRevision).toBe(2n);
        await refusal(log.append(s, [event('D'), event('E')], 1n));
        const events = await log.readStream(s);
        expect(events.map((e) => [e.revision, e.type])).toEqual([
          [0n, 'A'],
          [1n, 'B'],
          [2n, 'C'],
        ]);
      });

      it('keeps data and metadata as JSON', async () => {
        const s = unique('cart');
        const data = { name: 'Zoë “quoted” \u{1F600}', nested: { list: [1, 2.5, null, true] }, empty: null };
        await log.append(s, [event('Opened', data)], NO_STREAM);
        const [e] = await log.readStream(s);
        expect(e.data).toEqual(data);
        expect(e.metadata).toEqual(metadata);
      });

      it('keeps a batch item\u2019s marker in the metadata, found by reading the team\u2019s events after a journal (decisions.md §14)', async (ctx) => {
        if (!log.readTeam) return ctx.skip();
        const team = 9_000 + Math.floor(Math.random() * 1_000_000);
        const at = (batchItem?: string) => ({ ...metadata, team, ...(batchItem ? { batchItem } : {}) });
        const journal = await log.append(unique('batch'), [{ type: 'BatchStarted', data: { items: 3 }, metadata: at() }], NO_STREAM);
        const streams = [unique('thing'), unique('thing'), unique('thing')];
        for (const [i, s] of streams.entries()) await log.append(s, [{ type: 'Made', data: {}, metadata: at(`ref#${i}`) }], NO_STREAM);
        await log.append(unique('thing'), [{ type: 'Made', data: {}, metadata: { ...metadata, batchItem: 'ref#9' } }], NO_STREAM); // another team's
        const found = await log.readTeam(team, journal.position, 100);
        expect(found.map((e) => [e.stream, e.metadata.batchItem])).toEqual(streams.map((s, i) => [s, `ref#${i}`]));
      });

      it('rejects an empty append', async () => {
        await expect(log.append(unique('cart'), [], ANY)).rejects.toThrow();
      });

      it('fails an append whose data cannot be serialised, alone', async () => {
        const [a, bad, b] = [unique('cart'), unique('cart'), unique('cart')];
        const results = await Promise.allSettled([
          log.append(a, [event('Opened')], NO_STREAM),
          log.append(bad, [event('Opened', { amount: 10n })], NO_STREAM),
          log.append(b, [event('Opened')], NO_STREAM),
        ]);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect(await log.readStream(bad)).toEqual([]);
      });
    });

    describe('reading', () => {
      it('reads a missing stream as empty', async () => {
        expect(await log.readStream(unique('nothing'))).toEqual([]);
      });

      it('gives events increasing positions, and each append a position reached with its last event', async () => {
        const s = unique('cart');
        const r1 = await log.append(s, [event('A')], NO_STREAM);
        const r2 = await log.append(s, [event('B'), event('C')], 0n);
        const r3 = await log.append(s, [event('D')], 2n);
        const events = await log.readStream(s);
        for (let i = 1; i < events.length; i++) expect(comparePositions(events[i].position, events[i - 1].position)).toBe(1);
        // A follower waits for an append's position: it must be reached by the append's last event, not before.
        const within = (r: { position: Position }, last: RecordedEvent, before: RecordedEvent | null) => {
          expect(comparePositions(r.position, last.position)).toBeLessThanOrEqual(0);
          if (before) expect(comparePositions(r.position, before.position)).toBe(1);
        };
        within(r1, events[0], null);
        within(r2, events[2], events[0]);
        within(r3, events[3], events[2]);
        expect(comparePositions(r3.position, r2.position)).toBe(1);
      });

      it('answers head() with the position of the newest event', async () => {
        if (!options.shared) expect(await log.head()).toBeNull();
        const s = unique('cart');
        await log.append(s, [event('A'), event('B')], NO_STREAM);
        const events = await log.readStream(s);
        expect(await log.head()).toEqual(events[1].position);
      });

      it('reads a stream backwards from its end, at most maxCount events', async () => {
        if (!log.readStreamBackwards) return;
        const s = unique('ids');
        await log.append(s, [event('A'), event('B'), event('C')], NO_STREAM);
        expect((await log.readStreamBackwards(s, 2)).map((e) => e.type)).toEqual(['C', 'B']);
        expect(await log.readStreamBackwards(unique('nothing'), 1)).toEqual([]);
      });

      it('reads a stream up to a position, leaving out what came after', async () => {
        if (!log.readStreamUntil) return;
        const s = unique('cart');
        await log.append(s, [event('A')], NO_STREAM);
        const b = await log.append(s, [event('B')], 0n);
        await log.append(s, [event('C')], 1n);
        expect((await log.readStreamUntil(s, b.position)).map((e) => e.type)).toEqual(['A', 'B']);
        expect(await log.readStreamUntil(unique('nothing'), b.position)).toEqual([]);
      });
    });

    describe('subscribing', () => {
      it('catches up from the start, then goes live, in log order', async () => {
        const s = unique('cart');
        await log.append(s, [event('A'), event('B')], NO_STREAM);
        const f = follow(null);
        await until('the history arrived', () => f.of(s).length === 2);
        await log.append(s, [event('C')], 1n);
        await until('the live event arrived', () => f.of(s).length === 3);
        expect(f.of(s)).toEqual(await log.readStream(s));
        for (let i = 1; i < f.seen.length; i++) expect(comparePositions(f.seen[i].position, f.seen[i - 1].position)).toBe(1);
      });

      it('starts strictly after the position it is given', async () => {
        const s = unique('cart');
        await log.append(s, [event('A'), event('B'), event('C')], NO_STREAM);
        const [a] = await log.readStream(s);
        const f = follow(a.position);
        await until('B and C arrived', () => f.of(s).length >= 2);
        // Delivery is in order, so had A been delivered it would come first.
        expect(f.of(s).map((e) => e.type)).toEqual(['B', 'C']);
      });

      it('awaits the handler before delivering the next event', async () => {
        const s = unique('cart');
        let running = 0;
        let most = 0;
        const f = follow(await log.head(), {}, async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 2));
          running--;
        });
        await log.append(s, [event('A'), event('B'), event('C')], NO_STREAM);
        await log.append(s, [event('D')], 2n);
        await until('all four arrived', () => f.of(s).length === 4);
        expect(most).toBe(1);
        expect(f.of(s).map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
      });

      it('skips the types its filter refuses but moves the checkpoint past them', async () => {
        const s = unique('cart');
        const [skipped, kept] = [unique('Skipped'), unique('Kept')];
        const checkpoints: Position[] = [];
        const f = follow(await log.head(), { filter: (t) => t !== skipped, onCheckpoint: (p) => void checkpoints.push(p) });
        await log.append(s, [event(skipped), event(skipped)], NO_STREAM);
        await log.append(s, [event(skipped)], 1n);
        const last = (await log.readStream(s)).at(-1)!;
        await until('a checkpoint passed the skipped events', () => checkpoints.some((p) => comparePositions(p, last.position) >= 0));
        await log.append(s, [event(kept)], 2n);
        await until('the kept event arrived', () => f.of(s).length === 1);
        expect(f.of(s).map((e) => e.type)).toEqual([kept]);
      });

      it('delivers nothing more once stop() has resolved', async () => {
        const s = unique('cart');
        const start = await log.head();
        const stopped = follow(start);
        await log.append(s, [event('A')], NO_STREAM);
        await until('A arrived', () => stopped.of(s).length === 1);
        await stopped.sub.stop();
        await log.append(s, [event('B')], 0n);
        // A second follower seeing B shows B was there to deliver.
        const witness = follow(start);
        await until('the witness saw B', () => witness.of(s).length === 2);
        expect(stopped.of(s).map((e) => e.type)).toEqual(['A']);
      });

      it('resolves stop() only once the running handler has finished', async () => {
        const s = unique('cart');
        const order: string[] = [];
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        const f = follow(await log.head(), {}, async (e) => {
          if (e.stream !== s) return;
          await gate;
          order.push('handler done');
        });
        await log.append(s, [event('A')], NO_STREAM);
        await until('the handler is running', () => f.of(s).length === 1);
        const stopping = f.sub.stop().then(() => order.push('stopped'));
        for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
        release();
        await stopping;
        expect(order).toEqual(['handler done', 'stopped']);
      });

      it('reports a failing handler through onError and delivers nothing after it', async () => {
        const s = unique('cart');
        const errors: unknown[] = [];
        const boom = new Error('projector bug');
        const f = follow(await log.head(), { onError: (e) => void errors.push(e) }, (e) => {
          if (e.stream === s && e.type === 'A') throw boom;
        });
        await log.append(s, [event('A'), event('B')], NO_STREAM);
        await until('the failure was reported', () => errors.length > 0);
        expect(errors).toEqual([boom]);
        expect(f.of(s).map((e) => e.type)).toEqual(['A']);
      });
    });

    describe('racing', () => {
      it('lets exactly one of twenty appends at the same revision win', async () => {
        const s = unique('cart');
        await log.append(s, [event('Opened')], NO_STREAM);
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => log.append(s, [event('Claimed', { i })], 0n)));
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(19);
        for (const err of lost) expect(err).toMatchObject({ name: 'WrongExpectedRevision', actual: 1n });
        expect(await log.readStream(s)).toHaveLength(2);
      });

      it('lets exactly one of twenty NO_STREAM appends create the stream', async () => {
        const s = unique('claim');
        const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => log.append(s, [event('Claimed', { i })], NO_STREAM)));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ name: 'WrongExpectedRevision', actual: 0n });
        expect(await log.readStream(s)).toHaveLength(1);
      });

      it('appends to twenty different streams at once, all of them', async () => {
        const streams = Array.from({ length: 20 }, () => unique('cart'));
        const results = await Promise.all(streams.map((s) => log.append(s, [event('Opened')], NO_STREAM)));
        const positions = new Set(results.map((r) => `${r.position.commit}/${r.position.prepare}`));
        expect(positions.size).toBe(20);
        for (const s of streams) expect(await log.readStream(s)).toHaveLength(1);
      });
    });
  });
}

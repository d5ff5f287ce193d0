import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import {
  type AllStreamResolvedEvent,
  type EventStoreDBClient,
  StreamNotFoundError,
  UnavailableError,
  WrongExpectedVersionError,
} from '@eventstore/db-client';
// The client's own subscription stream, fed by a scripted gRPC call: what is under test is how the
// adapter consumes it (ordering of checkpoints, drops, stop), so the real consumer-facing half is used.
import { Subscription as ClientSubscription } from '@eventstore/db-client/dist/streams/utils/Subscription.js';
import { describe, expect, it } from 'vitest';
import { EsdbEventLog, type EsdbEventLogOptions } from '../../eventlog/esdb.js';
import { TEAM_PROJECTION_QUERY, TEAM_PROJECTION_VERSION } from '../../eventlog/esdb-team.js';
import { type Position, type RecordedEvent } from '../../domain/shared/events.js';
import { NO_STREAM, type SubscribeOptions, WrongExpectedRevision } from '../../eventlog/port.js';
import { until } from './eventlog.contract.js';

/** One subscribeToAll call: the options it was given and the gRPC call the test speaks for. */
interface Call {
  options: { fromPosition: unknown; filter?: { checkpointReached?: (s: never, p: Position) => Promise<void> | void } };
  grpc: PassThrough & { cancelled: boolean };
  event(e: AllStreamResolvedEvent): void;
  checkpoint(p: Position): void;
  drop(): void;
}

function scriptedClient(overrides: Record<string, unknown> = {}, { confirm = true } = {}) {
  const calls: Call[] = [];
  const client = {
    subscribeToAll(options: Call['options']) {
      const grpc = Object.assign(new PassThrough({ objectMode: true }), { cancelled: false });
      // The server confirms a subscription it accepts before sending anything else.
      if (confirm) grpc.write({ hasConfirmation: () => true, getConfirmation: () => ({ getSubscriptionId: () => randomUUID() }) });
      (grpc as unknown as { cancel(): void }).cancel = () => {
        // Like a cancelled gRPC call: it stops, and it does not end the stream it is piped into.
        grpc.cancelled = true;
        grpc.unpipe();
      };
      const sub = new ClientSubscription(async () => grpc as never, (e: unknown) => e as AllStreamResolvedEvent, {}, options.filter?.checkpointReached as never);
      calls.push({
        options,
        grpc,
        event: (e) => grpc.write({ hasEvent: () => true, getEvent: () => e }),
        checkpoint: (p) =>
          grpc.write({
            hasCheckpoint: () => true,
            getCheckpoint: () => ({ getCommitPosition: () => String(p.commit), getPreparePosition: () => String(p.prepare) }),
          }),
        drop: () => grpc.emit('error', new UnavailableError()),
      });
      return sub;
    },
    async dispose() {},
    ...overrides,
  };
  return { client: client as unknown as EventStoreDBClient, calls };
}

let nextPosition = 1000n;
function recorded(type: string, stream = 'cart-1', revision = 0n, isJson = true): AllStreamResolvedEvent {
  nextPosition += 10n;
  const event = {
    streamId: stream,
    id: randomUUID(),
    isJson,
    revision,
    type,
    created: new Date(),
    data: { type },
    metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
    position: { commit: nextPosition, prepare: nextPosition },
  };
  return { event } as unknown as AllStreamResolvedEvent;
}
const positionOf = (e: AllStreamResolvedEvent) => e.event!.position;

function follow(options: EsdbEventLogOptions = {}, sub: SubscribeOptions = {}, onEvent?: (e: RecordedEvent) => Promise<void> | void, confirm = true) {
  const scripted = scriptedClient({}, { confirm });
  const log = new EsdbEventLog(scripted.client, { retryInitialMs: 1, retryMaxMs: 4, ...options });
  const seen: string[] = [];
  const subscription = log.subscribe(
    null,
    async (e) => {
      seen.push(e.type);
      await onEvent?.(e);
    },
    sub,
  );
  return { ...scripted, log, seen, subscription };
}

describe('following EventStoreDB through the client subscription', () => {
  it('subscribes from the start, excluding system events on the server', async () => {
    const f = follow();
    await until('subscribed', () => f.calls.length === 1);
    expect(f.calls[0].options.fromPosition).toBe('start');
    expect(f.calls[0].options.filter).toMatchObject({ filterOn: 'eventType', regex: '^[^$].*' });
    await f.subscription.stop();
  });

  it('keeps a server checkpoint behind the events the handler has not finished', async () => {
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const f = follow({}, { onCheckpoint: (p) => void order.push(`checkpoint ${p.commit}`) }, async (e) => {
      if (e.type === 'A') await gate;
      order.push(e.type);
    });
    await until('subscribed', () => f.calls.length === 1);
    const [a, b] = [recorded('A'), recorded('B')];
    f.calls[0].event(a);
    f.calls[0].event(b);
    f.calls[0].checkpoint({ commit: positionOf(b).commit + 5n, prepare: positionOf(b).prepare + 5n });
    await until('A is being handled', () => f.seen.length === 1);
    release();
    await until('the checkpoint arrived', () => order.length === 3);
    expect(order).toEqual(['A', 'B', `checkpoint ${positionOf(b).commit + 5n}`]);
    await f.subscription.stop();
  });

  it('ignores a server checkpoint that lags behind an event already delivered', async () => {
    const checkpoints: Position[] = [];
    const f = follow({}, { onCheckpoint: (p) => void checkpoints.push(p) });
    await until('subscribed', () => f.calls.length === 1);
    const a = recorded('A');
    f.calls[0].event(a);
    f.calls[0].checkpoint({ commit: positionOf(a).commit - 1n, prepare: positionOf(a).prepare - 1n });
    const b = recorded('B');
    f.calls[0].event(b);
    await until('B arrived', () => f.seen.length === 2);
    expect(checkpoints).toEqual([]);
    await f.subscription.stop();
  });

  it('never takes the server\'s "end" sentinel for a checkpoint, nor resubscribes from it', async () => {
    // On an empty database a filtered $all subscription reports its checkpoint at the end
    // sentinel: commit and prepare 2^64-1 (-1 as an unsigned 64-bit integer).
    const END = 2n ** 64n - 1n;
    const checkpoints: Position[] = [];
    const f = follow({}, { onCheckpoint: (p) => void checkpoints.push(p) });
    await until('subscribed', () => f.calls.length === 1);
    f.calls[0].checkpoint({ commit: END, prepare: END });
    const real = { commit: 7n, prepare: 7n };
    f.calls[0].checkpoint(real);
    await until('a checkpoint arrived', () => checkpoints.length > 0);
    expect(checkpoints).toEqual([real]);
    f.calls[0].drop();
    await until('resubscribed', () => f.calls.length === 2);
    expect(f.calls[1].options.fromPosition).toEqual(real);
    await f.subscription.stop();
  });

  it('moves the checkpoint to the end of a stretch the filter skips, and skips non-JSON events', async () => {
    const checkpoints: Position[] = [];
    const f = follow({}, { filter: (t) => t !== 'Noise', onCheckpoint: (p) => void checkpoints.push(p) });
    await until('subscribed', () => f.calls.length === 1);
    const stretch = [recorded('Noise'), recorded('Noise'), recorded('Binary', 'x', 0n, false)];
    for (const e of stretch) f.calls[0].event(e);
    await until('a checkpoint at the end of the stretch', () => checkpoints.some((p) => p.commit === positionOf(stretch[2]).commit));
    f.calls[0].event(recorded('Kept'));
    await until('Kept arrived', () => f.seen.length === 1);
    expect(f.seen).toEqual(['Kept']);
    await f.subscription.stop();
  });

  it('resubscribes after a drop from the last position it went through, delivering nothing twice', async () => {
    const f = follow();
    await until('subscribed', () => f.calls.length === 1);
    const [a, b] = [recorded('A'), recorded('B')];
    f.calls[0].event(a);
    f.calls[0].event(b);
    await until('A and B arrived', () => f.seen.length === 2);
    f.calls[0].drop();
    await until('resubscribed', () => f.calls.length === 2);
    expect(f.calls[1].options.fromPosition).toEqual(positionOf(b));
    f.calls[1].event(recorded('C'));
    await until('C arrived', () => f.seen.length === 3);
    expect(f.seen).toEqual(['A', 'B', 'C']);
    await f.subscription.stop();
  });

  it('never gives up resubscribing: it reports each failed attempt through onDropped, then onResubscribed once confirmed', async () => {
    const dropped: unknown[] = [];
    const errors: unknown[] = [];
    let resubscribed = 0;
    const options = { onDropped: (e: unknown) => void dropped.push(e), onResubscribed: () => void resubscribed++, onError: (e: unknown) => void errors.push(e) };
    // Every call fails before the server confirms it, as it does while the server is down.
    const f = follow({ retryMaxMs: 2 }, options, undefined, false);
    const dropEach = setInterval(() => f.calls.at(-1)?.drop(), 1);
    const since = Date.now();
    try {
      // Once the old give-up window (here 30 ms) is well past, it is still trying.
      await until('many attempts, well past any give-up window', () => f.calls.length > 10 && Date.now() - since > 100);
    } finally {
      clearInterval(dropEach);
    }
    expect(errors).toEqual([]);
    expect(dropped.length).toBeGreaterThanOrEqual(10);
    expect(dropped[0]).toBeInstanceOf(UnavailableError);
    expect(resubscribed).toBe(0);
    await until('the last attempt is under way', () => f.calls.length === dropped.length + 1);
    const last = f.calls.at(-1)!;
    last.event(recorded('A'));
    await until('A arrived', () => f.seen.length === 1);
    expect(resubscribed).toBe(1);
    await f.subscription.stop();
  });

  it('fails for good when the handler throws: onError with its error, no resubscription', async () => {
    const errors: unknown[] = [];
    const boom = new Error('projector bug');
    const f = follow({}, { onError: (e) => void errors.push(e) }, () => {
      throw boom;
    });
    await until('subscribed', () => f.calls.length === 1);
    f.calls[0].event(recorded('A'));
    await until('the failure was reported', () => errors.length === 1);
    expect(errors).toEqual([boom]);
    await f.subscription.stop();
    expect(f.calls).toHaveLength(1);
  });

  it('stops while waiting to resubscribe, without resubscribing', async () => {
    const f = follow({ retryInitialMs: 60_000, retryMaxMs: 60_000 });
    await until('subscribed', () => f.calls.length === 1);
    f.calls[0].drop();
    await f.subscription.stop();
    expect(f.calls).toHaveLength(1);
  });

  it('cancels the server call when stopped', async () => {
    const f = follow();
    await until('subscribed', () => f.calls.length === 1);
    await f.subscription.stop();
    await until('the server call was cancelled', () => f.calls[0].grpc.cancelled);
  });
});

describe('appending and reading through the client', () => {
  it('turns WrongExpectedVersion into WrongExpectedRevision with the actual revision', async () => {
    const refuse = (current: bigint | 'no_stream') => async () => {
      throw new WrongExpectedVersionError(undefined, { streamName: 's', expected: 0n, current });
    };
    const meta = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' };
    for (const [current, actual] of [
      [3n, 3n],
      ['no_stream', null],
    ] as const) {
      const log = new EsdbEventLog(scriptedClient({ appendToStream: refuse(current) }).client);
      const err = await log.append('s', [{ type: 'A', data: {}, metadata: meta }], 0n).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(WrongExpectedRevision);
      expect(err).toMatchObject({ stream: 's', expected: 0n, actual });
    }
  });

  it('reads a stream the server does not know as empty', async () => {
    const readStream = () =>
      (async function* () {
        throw new StreamNotFoundError(undefined, 'cart-404');
      })();
    const log = new EsdbEventLog(scriptedClient({ readStream }).client);
    expect(await log.readStream('cart-404')).toEqual([]);
  });

  it('answers head() with the newest event that is not a system event, and cancels the read', async () => {
    const user = recorded('Opened');
    const system = { event: { ...recorded('$metadata').event, type: '$metadata' } };
    let cancelled = false;
    const readAll = () =>
      Object.assign(
        (async function* () {
          yield system;
          yield user;
          yield recorded('Older');
        })(),
        { cancel: async () => void (cancelled = true) },
      );
    const log = new EsdbEventLog(scriptedClient({ readAll }).client);
    expect(await log.head()).toEqual(positionOf(user));
    expect(cancelled).toBe(true);
  });

  it('reads a stream backwards from its end, at most maxCount events, in one request', async () => {
    const asked: unknown[] = [];
    const [newest, older] = [recorded('Reserved', 'ids-thing', 7n), recorded('Reserved', 'ids-thing', 6n)];
    const readStream = (stream: string, options: unknown) => {
      asked.push({ stream, options });
      return (async function* () {
        yield newest;
        yield older;
      })();
    };
    const log = new EsdbEventLog(scriptedClient({ readStream }).client);
    const events = await log.readStreamBackwards('ids-thing', 2);
    expect(events.map((e) => e.revision)).toEqual([7n, 6n]);
    // The client's own names: direction BACKWARDS from revision END ('backwards', 'end').
    expect(asked).toEqual([{ stream: 'ids-thing', options: { direction: 'backwards', fromRevision: 'end', maxCount: 2 } }]);
    const missing = () =>
      (async function* () {
        throw new StreamNotFoundError(undefined, 'ids-none');
      })();
    expect(await new EsdbEventLog(scriptedClient({ readStream: missing }).client).readStreamBackwards('ids-none', 1)).toEqual([]);
  });

  it('reads a stream up to a position and cancels the rest of the read', async () => {
    const [a, b, c] = [recorded('A', 'cart-1', 0n), recorded('B', 'cart-1', 1n), recorded('C', 'cart-1', 2n)];
    let cancelled = false;
    let pulledPast = false;
    const readStream = () =>
      Object.assign(
        (async function* () {
          yield a;
          yield b;
          yield c;
          pulledPast = true;
        })(),
        { cancel: async () => void (cancelled = true) },
      );
    const log = new EsdbEventLog(scriptedClient({ readStream }).client);
    expect((await log.readStreamUntil('cart-1', positionOf(b) as Position)).map((e) => e.type)).toEqual(['A', 'B']);
    expect(cancelled).toBe(true);
    expect(pulledPast).toBe(false);
  });
});

describe('reading one team\u2019s events from EventStoreDB', () => {
  /** A client whose team streams hold `events` (as links resolved to them), recording what was asked. */
  function teamClient(streams: Record<string, AllStreamResolvedEvent[]>, createError?: Error) {
    const asked: Array<{ stream: string; options: unknown }> = [];
    const projections: Array<{ name: string; query: string; options: unknown }> = [];
    let yielded = 0;
    const scripted = scriptedClient({
      readStream(stream: string, options: { fromRevision?: bigint | 'start' | 'end'; direction?: string; maxCount?: number }) {
        asked.push({ stream, options });
        // Each event is read through its link, whose revision is its index in the team stream.
        const links = streams[stream]?.map((e, i) => ({ ...e, link: { revision: BigInt(i) } }));
        return Object.assign(
          (async function* () {
            if (!links) throw new StreamNotFoundError({} as never, stream);
            const backwards = options.direction === 'backwards';
            const from = options.fromRevision ?? (backwards ? 'end' : 'start');
            let list = backwards ? [...links].reverse() : links;
            if (typeof from === 'bigint') list = list.filter((l) => (backwards ? l.link.revision <= from : l.link.revision >= from));
            for (const l of list.slice(0, options.maxCount ?? Infinity)) {
              yielded++;
              yield l;
            }
          })(),
          { cancel: async () => undefined },
        );
      },
      async createProjection(name: string, query: string, options: unknown) {
        projections.push({ name, query, options });
        if (createError) throw createError;
      },
    });
    return { log: new EsdbEventLog(scripted.client), asked, projections, yielded: () => yielded };
  }

  const teamEvent = (team: number, stream: string) => {
    const r = recorded('ConstituentCreated', stream);
    (r.event!.metadata as { team: number }).team = team;
    return r;
  };

  it('carries a batch item\u2019s marker in the metadata it appends, and reads it back from the team\u2019s stream (decisions.md §14)', async () => {
    const sent: Array<{ stream: string; metadata: unknown }> = [];
    const appending = scriptedClient({
      async appendToStream(stream: string, events: Array<{ metadata: unknown }>) {
        for (const e of events) sent.push({ stream, metadata: e.metadata });
        return { success: true, nextExpectedRevision: 0n, position: { commit: 5n, prepare: 5n } };
      },
    });
    const meta = { team: 7, source: 'Public API' as const, keyName: 'Sync', correlationId: 'c', at: '2024-05-01T12:00:00.000Z', revision: 1, batchItem: 'abc#3' };
    await new EsdbEventLog(appending.client).append('constituent-9', [{ type: 'ConstituentCreated', data: {}, metadata: meta }], NO_STREAM);
    expect(sent).toEqual([{ stream: 'constituent-9', metadata: meta }]);
    const started = teamEvent(7, 'batch-abc');
    const marked = teamEvent(7, 'constituent-9');
    Object.assign(marked.event!.metadata as object, { batchItem: 'abc#3' });
    const c = teamClient({ 'turnout_team-7': [started, marked] });
    const [journal] = await c.log.readTeam(7, null, 1);
    expect((await c.log.readTeam(7, journal.position, 10)).map((e) => [e.stream, e.metadata.batchItem])).toEqual([['constituent-9', 'abc#3']]);
  });

  it('reads the team\u2019s projected stream with links resolved, after or from a position, up to the limit', async () => {
    const events = [teamEvent(7, 'constituent-1'), teamEvent(7, 'constituent-2'), teamEvent(7, 'constituent-3')];
    const c = teamClient({ 'turnout_team-7': events });
    const all = await c.log.readTeam(7, null, 10);
    expect(all.map((e) => e.stream)).toEqual(['constituent-1', 'constituent-2', 'constituent-3']);
    expect(c.asked[0]).toEqual({ stream: 'turnout_team-7', options: { resolveLinkTos: true, fromRevision: 0n } });
    expect((await c.log.readTeam(7, all[0].position, 10)).map((e) => e.stream)).toEqual(['constituent-2', 'constituent-3']);
    expect((await c.log.readTeam(7, all[1].position, 10, true)).map((e) => e.stream)).toEqual(['constituent-2', 'constituent-3']);
    expect((await c.log.readTeam(7, null, 2)).map((e) => e.stream)).toEqual(['constituent-1', 'constituent-2']);
    // Never another team's stream; reads never make the projection (the projector does, at its start).
    expect(c.asked.every((a) => a.stream === 'turnout_team-7')).toBe(true);
    expect(c.projections).toHaveLength(0);
  });

  it('resumes a page where the last one ended, without reading the team\u2019s stream from its start', async () => {
    const events = Array.from({ length: 1_000 }, (_, i) => teamEvent(7, `constituent-${i}`));
    const c = teamClient({ 'turnout_team-7': events });
    const pages: string[][] = [];
    let from = null;
    for (let page = 0; page < 5; page++) {
      const got = await c.log.readTeam(7, from, 100);
      pages.push(got.map((e) => e.stream));
      from = got[got.length - 1].position;
    }
    expect(pages.flat()).toEqual(events.slice(0, 500).map((e) => e.event!.streamId));
    // One read per page, each from the link after the last page's end.
    expect(c.asked.map((a) => (a.options as { fromRevision: bigint }).fromRevision)).toEqual([0n, 100n, 200n, 300n, 400n]);
    expect(c.yielded()).toBe(500);
  });

  it('finds where an unknown cursor resumes by a binary search over the links, skipping links whose event is gone', async () => {
    const events = Array.from({ length: 1_000 }, (_, i) => teamEvent(7, `constituent-${i}`));
    // Links to deleted events resolve to nothing (a link without its event).
    for (const i of [600, 601, 602, 603]) events[i] = { ...events[i], event: undefined } as unknown as AllStreamResolvedEvent;
    const c = teamClient({ 'turnout_team-7': events });
    const fresh = teamClient({ 'turnout_team-7': events });
    const after = await fresh.log.readTeam(7, events[599].event!.position, 3);
    expect(after.map((e) => e.stream)).toEqual(['constituent-604', 'constituent-605', 'constituent-606']);
    const at = await c.log.readTeam(7, events[250].event!.position, 2, true);
    expect(at.map((e) => e.stream)).toEqual(['constituent-250', 'constituent-251']);
    // About log2(1,000) probes of a few links each, never the 250 links before the cursor.
    expect(c.asked.length).toBeLessThan(15);
    expect(c.yielded()).toBeLessThan(250);
    // A position past the last event: nothing, and no read from the start either.
    expect(await c.log.readTeam(7, events[999].event!.position, 10)).toEqual([]);
  });

  it('links exactly the events that name a team (the projection\u2019s query, run with stand-ins)', () => {
    const links: string[] = [];
    let handlers: Record<string, (s: unknown, e: unknown) => void> = {};
    const fromAll = () => ({ when: (h: typeof handlers) => void (handlers = h) });
    new Function('fromAll', 'linkTo', TEAM_PROJECTION_QUERY)(fromAll, (stream: string) => links.push(stream));
    const run = (eventType: string, metadata: unknown, isJson = true) => handlers.$any({}, { eventType, metadata, isJson });
    run('ConstituentCreated', { team: 4 });
    run('ConstituentCreated', JSON.stringify({ team: 5 }));
    run('$>', { team: 4 });
    run('IdBlockReserved', { team: 0 });
    run('Binary', { team: 4 }, false);
    // A foreign event whose raw metadata is not JSON: the server's getter throws on it.
    handlers.$any({}, { eventType: 'Foreign', isJson: true, get metadata() { throw new SyntaxError('Unexpected token'); } });
    expect(links).toEqual(['turnout_team-4', 'turnout_team-5']);
    // The state names the query's version, which the projector's check compares.
    expect(handlers.$any({}, { eventType: 'ConstituentCreated', metadata: { team: 6 }, isJson: true })).toEqual({ query: TEAM_PROJECTION_VERSION });
  });

  it('reads a team\u2019s events up to a position from $all itself, where the links may trail: after the cursor, other teams, system events and links left out, a page at most, the rest of $all not walked', async () => {
    const [mark, mine, link, other, system, second, past] = [
      teamEvent(7, 'batch-abc'),
      teamEvent(7, 'constituent-1'),
      { event: { ...teamEvent(7, 'turnout_team-7').event, type: '$>' } } as unknown as AllStreamResolvedEvent,
      teamEvent(8, 'constituent-2'),
      { event: { ...teamEvent(7, 'x').event, type: '$metadata' } } as unknown as AllStreamResolvedEvent,
      teamEvent(7, 'constituent-3'),
      teamEvent(7, 'constituent-4'),
    ];
    const all = [mark, mine, link, other, system, second, past];
    const asked: unknown[] = [];
    let cancelled = 0;
    let pulledPast = false;
    const readAll = (options: { fromPosition: Position | 'start' }) => {
      asked.push(options);
      const from = options.fromPosition;
      return Object.assign(
        (async function* () {
          // The server starts a read from a position at the event there.
          for (const e of all) {
            if (from !== 'start' && e.event!.position.commit < from.commit) continue;
            if (e === past) pulledPast = true;
            yield e;
          }
        })(),
        { cancel: async () => void cancelled++ },
      );
    };
    // The team's projected stream has no link yet: readTeam would miss them.
    const log = new EsdbEventLog(scriptedClient({ readAll, readStream: () => (async function* () {})() }).client);
    const to = positionOf(second) as Position;
    const found = await log.readTeamUpTo(7, positionOf(mark) as Position, to, 10);
    expect(found.map((e) => e.stream)).toEqual(['constituent-1', 'constituent-3']);
    expect(asked).toEqual([{ fromPosition: positionOf(mark), resolveLinkTos: false }]);
    // Stopped at the first event past `to`, and the server's read cancelled.
    expect(cancelled).toBe(1);
    expect(pulledPast).toBe(true);
    // A page of one, then the next from its end: the caller pages as readTeam's.
    const [first] = await log.readTeamUpTo(7, positionOf(mark) as Position, to, 1);
    expect(first.stream).toBe('constituent-1');
    expect((await log.readTeamUpTo(7, first.position, to, 1)).map((e) => e.stream)).toEqual(['constituent-3']);
    expect((await log.readTeamUpTo(7, null, positionOf(mark) as Position, 10)).map((e) => e.stream)).toEqual(['batch-abc']);
    expect(asked.at(-1)).toEqual({ fromPosition: 'start', resolveLinkTos: false });
  });

  it('reads past another producer\u2019s JSON event without metadata, as the team projection does, and cancels the server\u2019s read whatever ends it, a failure too', async () => {
    const [mark, foreign, mine, other, broken] = [
      teamEvent(7, 'batch-abc'),
      // The client gives `metadata` undefined for an event written without any (convertGrpcEvent).
      { event: { ...teamEvent(7, 'orders-1').event, type: 'OrderPlaced', metadata: undefined } } as unknown as AllStreamResolvedEvent,
      teamEvent(7, 'constituent-1'),
      teamEvent(8, 'constituent-2'),
      // An event the server sent without a log position: the read fails.
      { event: { ...teamEvent(7, 'constituent-3').event, position: undefined } } as unknown as AllStreamResolvedEvent,
    ];
    let cancelled = 0;
    const over = (all: AllStreamResolvedEvent[]) => () =>
      Object.assign(
        (async function* () {
          yield* all;
        })(),
        { cancel: async () => void cancelled++ },
      );
    const read = (all: AllStreamResolvedEvent[]) => new EsdbEventLog(scriptedClient({ readAll: over(all), readStream: () => (async function* () {})() }).client);
    const found = await read([mark, foreign, mine, other]).readTeamUpTo(7, positionOf(mark) as Position, positionOf(other) as Position, 10);
    expect(found.map((e) => e.stream)).toEqual(['constituent-1']);
    expect(cancelled).toBe(1);
    await expect(read([mark, mine, broken, other]).readTeamUpTo(7, positionOf(mark) as Position, positionOf(other) as Position, 10)).rejects.toThrow(/without a log position/);
    expect(cancelled).toBe(2);
  });

  it('answers a team with no events yet with none, and keeps a projection that already exists', async () => {
    const c = teamClient({}, new Error('Conflict: projection turnout-teams already exists'));
    expect(await c.log.readTeam(3, null, 10)).toEqual([]);
  });
});

describe('the change feed\u2019s projection, checked when the projector starts', () => {
  /** A projection as the server keeps it, through the client calls the check makes. */
  function projectionClient(initial: { status: string; query?: number } | null) {
    let projection = initial;
    const calls: string[] = [];
    const scripted = scriptedClient({
      async getProjectionStatus(name: string) {
        calls.push(`status ${name}`);
        if (!projection) throw Object.assign(new Error('not found'), { type: 'not-found' });
        return { projectionStatus: projection.status, stateReason: projection.status === 'Faulted' ? 'TypeError: boom' : '' };
      },
      async getProjectionState() {
        return projection?.query === undefined ? null : { query: projection.query };
      },
      async createProjection(name: string, query: string, options: { emitEnabled?: boolean }) {
        calls.push(`create ${name} emit=${options.emitEnabled}`);
        expect(query).toBe(TEAM_PROJECTION_QUERY);
        projection = { status: 'Running', query: TEAM_PROJECTION_VERSION };
      },
      async updateProjection(name: string, query: string, options: { emitEnabled?: boolean }) {
        calls.push(`update ${name} emit=${options.emitEnabled}`);
        expect(query).toBe(TEAM_PROJECTION_QUERY);
        projection = { ...projection!, query: TEAM_PROJECTION_VERSION };
      },
      async enableProjection(name: string) {
        calls.push(`enable ${name}`);
        projection = { ...projection!, status: 'Running' };
      },
      readStream: () => Object.assign((async function* () {})(), { cancel: async () => undefined }),
    });
    const log = new EsdbEventLog(scripted.client);
    return { log, feed: log.teamFeed(), calls, set: (p: typeof projection) => (projection = p) };
  }

  it('creates a missing projection', async () => {
    const c = projectionClient(null);
    await c.feed.check(() => undefined);
    expect(c.calls).toEqual(['status turnout-teams', 'create turnout-teams emit=true']);
    expect(c.feed.status()).toEqual({ name: 'team-feed', state: 'caught_up', behind: null });
  });

  it('updates a projection whose query is an older version, and starts a stopped one again', async () => {
    const reports: string[] = [];
    const c = projectionClient({ status: 'Stopped', query: TEAM_PROJECTION_VERSION - 1 });
    await c.feed.check((m) => reports.push(m));
    expect(c.calls).toEqual(['status turnout-teams', 'update turnout-teams emit=true', 'enable turnout-teams']);
    expect(reports).toEqual([expect.stringMatching(/query updated/), expect.stringMatching(/was stopped: started again/)]);
    // A current, running projection is left as it is.
    c.calls.length = 0;
    await c.feed.check(() => undefined);
    expect(c.calls).toEqual(['status turnout-teams']);
  });

  it('reports a faulted projection once, fails readiness and refuses feed pages until it runs again', async () => {
    const reports: string[] = [];
    const c = projectionClient({ status: 'Faulted', query: TEAM_PROJECTION_VERSION });
    await c.feed.check((m) => reports.push(m));
    await c.feed.check((m) => reports.push(m));
    expect(reports).toEqual([expect.stringMatching(/turnout-teams is faulted \(TypeError: boom\)/)]);
    expect(c.feed.status().state).toBe('failed');
    await expect(c.log.readTeam(1, null, 10)).rejects.toThrow(/change feed is unavailable/);
    c.set({ status: 'Running', query: TEAM_PROJECTION_VERSION });
    await c.feed.check(() => undefined);
    expect(c.feed.status().state).toBe('caught_up');
    expect(await c.log.readTeam(1, null, 10)).toEqual([]);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { EventLog, NewEvent } from '../eventlog/port.js';
import { SqliteKeyStore } from '../eventlog/keys.js';
import { SealingEventLog } from '../eventlog/sealed-log.js';
import { Sealer } from '../eventlog/sealing.js';
import { SqliteEventLog } from '../eventlog/sqlite.js';
import { seed } from './constituents.js';
import { load, mainThreadCpuUs, median, processCpuUs, threadCpuUs } from './lib.js';
import { cpuLine, liveThreads, measuredByThread, named, started, type ThreadCpu, threadLines } from './thread-cpu.js';
import { person } from './names.js';
import { type Product, startProduct } from './product.js';

/**
 * Issue 31 point 3: what sealing personal fields costs (decisions.md §17), at most 10% of the
 * write path's bench and of the change feed's read rate. The embedded stack erases by rewriting
 * its log in place and seals nothing; EventStoreDB's stack seals every constituent's personal
 * fields under its own key at the log port (eventlog/sealed-log.ts). Measured three ways, plain
 * against sealed in alternated rounds of the same run:
 *
 * - the HTTP figures the issue names, on the embedded server with its SQLite log used through the
 *   port only, as EventStoreDB's is (the TURNOUT_BENCH_LOG switch, runtime/wiring.ts): `POST
 *   /api/v1/constituents` over 64 connections, and the change feed read page after page from its
 *   read model, which the projector keeps in the read store as on EventStoreDB with MongoDB
 *   (dispatcher/feed-model.ts: no feed read opens an event); and for comparison the feed as it
 *   was served there before, built from the team's events at each read (dispatcher/feed.ts,
 *   TURNOUT_BENCH_FEED=log), through the sealing layer;
 * - the decorator alone over a bare SQLite log: appends 64 at a time, the team read back in pages
 *   of 1,000 with the keys in memory, and by a fresh process (no key in memory);
 * - the floor of each piece alone: one event's AES-GCM seal and open, a key made, a key fetched.
 */
const N = Number(process.env.BENCH_SEALING_N ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/**
 * The POST figure's rounds: more and shorter than the other figures', since a round's rate moves
 * by tens of % on a shared machine and the cost is the median of the rounds' ratios (9 rounds of
 * 2.5 s cost about what 5 of 5 s did).
 */
const POST_ROUNDS = Number(process.env.BENCH_POST_ROUNDS ?? 9);
/**
 * The feed figures' rounds: as many as the POST's, for the same reason (a round of 4 walks takes
 * a fraction of a second, and its rate moves by tens of % on a shared machine).
 */
const FEED_ROUNDS = Number(process.env.BENCH_FEED_ROUNDS ?? POST_ROUNDS);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 2_000);
const WARMUP_MS = 500;
const IN_FLIGHT = 64;
const CONNECTIONS = 64;
const TARGET = 10;
const meta = { team: 1, source: 'Public API' as const, keyName: 'bench', correlationId: 'bench', at: '2026-11-27T08:00:00.000Z' };

const fields = (i: number) => ({
  FirstName: `First${i}`,
  LastName: `Last${i}`,
  ConstituentName: `First${i} Last${i}`,
  Email1: `person${i}@example.org`,
  Phone1: String(6170000000 + i),
  MailingAddressLine1: `${i} Main Street`,
  MailingCity: 'Boston',
  MailingState: 'MA',
  MailingZipCode: '02134',
  DateOfBirth: '1980-01-02',
  FkConstituentType: 1,
  IsActiveConstituent: true,
});

const gc = () => (globalThis as { gc?: () => void }).gc?.();

/** Runs `plain` and `sealed` once per round, the one first in even rounds, the other in odd ones, so a drift of the machine favours neither. */
async function alternated<T>(plain: () => Promise<T>, sealed: () => Promise<T>, rounds = ROUNDS): Promise<Array<{ plain: T; sealed: T }>> {
  const out: Array<{ plain: T; sealed: T }> = [];
  for (let r = 0; r < rounds; r++) {
    gc();
    if (r % 2) {
      const s = await sealed();
      gc();
      out.push({ sealed: s, plain: await plain() });
    } else {
      const p = await plain();
      gc();
      out.push({ plain: p, sealed: await sealed() });
    }
  }
  return out;
}

/** A figure beside its baseline: medians, the cost (from the median of the rounds' ratios), its spread over the rounds, the verdict. */
function costLine(label: string, unit: string, rounds: Array<{ plain: number; sealed: number }>, target = true): string {
  const ratios = rounds.map((r) => r.sealed / r.plain);
  const cost = (1 - median(ratios)) * 100;
  const spread = ratios.map((x) => ((1 - x) * 100).toFixed(1)).join(', ');
  const verdict = target ? ` (target at most ${TARGET}%: ${cost <= TARGET ? 'met' : 'MISSED'})` : '';
  return `  ${label}: plain ${median(rounds.map((r) => r.plain)).toFixed(0)} ${unit}, sealed ${median(rounds.map((r) => r.sealed)).toFixed(0)} ${unit}: cost ${cost.toFixed(1)}%${verdict}; rounds ${spread}%`;
}

// --- the HTTP path -------------------------------------------------------------------------

const withLog = (mode: 'port' | 'sealed', feed: 'model' | 'log' = 'model') =>
  startProduct({ env: { ...process.env, TURNOUT_BENCH_LOG: mode, ...(feed === 'log' ? { TURNOUT_BENCH_FEED: 'log' } : {}) } });

/**
 * The team's whole feed is read this many times a measurement: the thread's CPU is counted in
 * 10 ms ticks, and one walk of a few thousand envelopes from a read model is a few ticks.
 */
const FEED_WALKS = Math.max(1, Math.ceil(20_000 / N));

/**
 * Reads the team's whole change feed, 1,000 envelopes a page, as an integrator catching up does,
 * FEED_WALKS times: envelopes per second, and the main thread's CPU per envelope (the server's,
 * and this client's parsing of the pages, which is the same on both sides).
 */
async function walkFeed(p: Product): Promise<{ rate: number; cpu: number }> {
  const c0 = mainThreadCpuUs();
  const t0 = performance.now();
  let n = 0;
  for (let walk = 0; walk < FEED_WALKS; walk++) n += await walkOnce(p);
  return { rate: n / ((performance.now() - t0) / 1000), cpu: (mainThreadCpuUs() - c0) / n };
}

async function walkOnce(p: Product): Promise<number> {
  let n = 0;
  for (let after = ''; ; ) {
    const res = await fetch(`${p.origin}/api/v1/changes?limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`, { headers: { authorization: p.auth } });
    if (res.status !== 200) throw new Error(`GET /changes: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { changes: unknown[]; next: string; hasMore: boolean };
    n += page.changes.length;
    if (!page.hasMore) break;
    after = page.next;
  }
  if (n < N) throw new Error(`the feed gave ${n} envelopes of at least ${N}`);
  return n;
}


/** The feed read, plain against sealed, on a pair of servers seeded alike (seed first): warmed up, then alternated rounds. */
async function feedRounds(plain: Product, sealed: Product) {
  await walkOnce(plain);
  await walkOnce(sealed);
  return alternated(
    () => walkFeed(plain),
    () => walkFeed(sealed),
    FEED_ROUNDS,
  );
}

/** The feed as it was served on the port's stack before its read model: built from the log at each read. */
async function feedFromLog(): Promise<string[]> {
  const plain = await withLog('port', 'log');
  const sealed = await withLog('sealed', 'log');
  try {
    await seed(plain, N);
    await seed(sealed, N);
    const feed = await feedRounds(plain, sealed);
    return [
      costLine(`GET /api/v1/changes, for comparison: built from the log at each read (dispatcher/feed.ts, TURNOUT_BENCH_FEED=log), ${N} constituents, pages of 1,000, read ${FEED_WALKS} times a round, ${FEED_ROUNDS} rounds`, 'envelopes/s', feed.map((r) => ({ plain: r.plain.rate, sealed: r.sealed.rate })), false),
      cpuLine('  main-thread CPU an envelope (server and client)', feed.map((r) => ({ plain: r.plain.cpu, sealed: r.sealed.cpu }))),
    ];
  } finally {
    await plain.close();
    await sealed.close();
  }
}

/**
 * The threads a bench server starts beyond the main one, in order (runtime/wiring.ts): at its
 * start its log's writer first; sealed, the key store's and then the sealing thread at its first
 * writes (SealingEventLog); the others are numbered after the writer (`log writer+1`: the
 * idempotency store's and the like). A thread whose median is under 0.5 µs is left out of the lines.
 */
const SERVER_THREADS = ['log writer'];
const LAZY_THREADS = ['key store', 'sealing'];

async function http(): Promise<string[]> {
  const t0 = liveThreads();
  const plain = await withLog('port');
  const t1 = liveThreads();
  const sealed = await withLog('sealed');
  const t2 = liveThreads();
  try {
    const load0 = loadavg()[0];
    await seed(plain, N);
    await seed(sealed, N);
    const feed = await feedRounds(plain, sealed);
    const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify(person(i, '{{n}}')));
    let own = { plain: [] as Array<{ tid: number; name: string }>, sealed: [] as Array<{ tid: number; name: string }> };
    const helpers = [...t0].filter((t) => t !== process.pid);
    // The main thread's CPU per request, the warm-up's included (an over-estimate on both sides alike), and every thread's.
    const writes = async (p: Product) => {
      const { out, cpu } = await measuredByThread(
        p === plain ? own.plain : own.sealed,
        helpers,
        () =>
          load({
            connections: CONNECTIONS,
            warmupMs: WARMUP_MS,
            durationMs: DURATION_MS,
            origin: p.origin,
            requests: bodies.map((body) => ({ method: 'POST', path: '/api/v1/constituents', headers: { 'content-type': 'application/json', authorization: p.auth }, body })),
          }),
        (m) => m.count,
      );
      return { ...out, cpu: cpu.main, threads: cpu };
    };
    // Each server's code warmed up first: the first seconds of a process run slower, whichever it
    // is. By then each has started its threads (the sealed one's key store and sealing threads
    // at its first writes, in its seed); the load generator's has ended.
    await writes(plain);
    await writes(sealed);
    // The load generator's thread ends just after its answer.
    await new Promise((settled) => setTimeout(settled, 200));
    const t3 = liveThreads();
    own = {
      plain: named(started(t0, t1).filter((t) => t3.has(t)), SERVER_THREADS),
      sealed: [...named(started(t1, t2).filter((t) => t3.has(t)), SERVER_THREADS), ...named(started(t2, t3), LAZY_THREADS)],
    };
    const w = await alternated(
      () => writes(plain),
      () => writes(sealed),
      POST_ROUNDS,
    );
    const p99 = (side: 'plain' | 'sealed') => median(w.map((r) => r[side].p99)).toFixed(1);
    return [
      `The HTTP path, the embedded server with its SQLite log used through the port only, as on EventStoreDB (TURNOUT_BENCH_LOG=port, and =sealed), read models in memory; load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after`,
      costLine(`POST /api/v1/constituents, ${CONNECTIONS} connections, ${POST_ROUNDS} rounds of ${DURATION_MS / 1000} s`, 'req/s', w.map((r) => ({ plain: r.plain.rps, sealed: r.sealed.rps }))) + `; p99 plain ${p99('plain')} ms, sealed ${p99('sealed')} ms`,
      cpuLine('  main-thread CPU a request', w.map((r) => ({ plain: r.plain.cpu, sealed: r.sealed.cpu }))),
      ...threadLines('  a request', w.map((r) => ({ plain: r.plain.threads, sealed: r.sealed.threads })), '; the rest: the load generator, the same work on both sides'),
      costLine(`GET /api/v1/changes from the feed's read model (dispatcher/feed-model.ts), ${N} constituents, pages of 1,000, read ${FEED_WALKS} times a round, ${FEED_ROUNDS} rounds`, 'envelopes/s', feed.map((r) => ({ plain: r.plain.rate, sealed: r.sealed.rate }))),
      cpuLine('  main-thread CPU an envelope (server and client)', feed.map((r) => ({ plain: r.plain.cpu, sealed: r.sealed.cpu }))),
    ];
  } finally {
    await plain.close();
    await sealed.close();
  }
}

// --- the decorator over a bare log -------------------------------------------------------------

async function appendAll(log: EventLog): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < N; i = next++) {
        const e: NewEvent = { type: 'ConstituentCreated', data: { id: i + 1, fields: fields(i) }, metadata: meta };
        await log.append(`constituent-${i + 1}`, [e], 'no_stream');
      }
    }),
  );
  return N / ((performance.now() - t0) / 1000);
}

async function readAll(log: EventLog): Promise<number> {
  const t0 = performance.now();
  let read = 0;
  for (let from: { commit: bigint; prepare: bigint } | null = null; ; ) {
    const page = await log.readTeam!(1, from, 1_000);
    read += page.length;
    if (page.length < 1_000) break;
    from = page[page.length - 1].position;
  }
  if (read !== N) throw new Error(`read ${read} of ${N}`);
  return read / ((performance.now() - t0) / 1000);
}

interface PortRound {
  writes: number;
  reads: number;
  /** Read by another process, with no key in memory (sealed only; the plain figure is `reads`). */
  cold: number;
  /** The appends' CPU µs an append by thread (its log's and key store's threads start with it). */
  threads: ThreadCpu;
  /** The process's CPU over the appends' wall time: how many of the cores the appends kept busy. */
  busy: number;
}

/** The threads a round's log starts, in order: the log's writer; sealed, the key store's and the sealing thread's at the first appends. */
const PORT_THREADS = ['log writer', 'key store', 'sealing'];

async function portRound(sealed: boolean): Promise<PortRound> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-sealing-'));
  const main = new Sealer(Sealer.newKey());
  const open = () => {
    const inner = new SqliteEventLog(path.join(dir, 'log.sqlite'));
    return sealed ? new SealingEventLog(inner, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main)) : inner;
  };
  const before = liveThreads();
  const log = open();
  try {
    const c0 = processCpuUs();
    const threads0 = threadCpuUs();
    const t0 = performance.now();
    const writes = await appendAll(log);
    const busy = (processCpuUs() - c0) / 1000 / (performance.now() - t0);
    // Every thread's CPU since the log opened (its own threads started with it), an append.
    const c1 = threadCpuUs();
    const us = (tids: number[]) => tids.reduce((sum, t) => sum + (c1.get(t) ?? 0) - (threads0.get(t) ?? 0), 0);
    const own = named(started(before, new Set(c1.keys())), PORT_THREADS);
    const threads: ThreadCpu = { main: us([process.pid]) / N };
    for (const t of own) threads[t.name] = us([t.tid]) / N;
    threads['V8 and libuv helpers'] = us([...before].filter((t) => t !== process.pid)) / N;
    threads.process = (processCpuUs() - c0) / N;
    threads['the rest'] = threads.process - Object.entries(threads).reduce((sum, [k, v]) => (k === 'process' ? sum : sum + v), 0);
    const reads = await readAll(log);
    if (!sealed) return { writes, reads, cold: reads, threads, busy };
    const fresh = open();
    try {
      return { writes, reads, cold: await readAll(fresh), threads, busy };
    } finally {
      await fresh.close();
    }
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function port(): Promise<string[]> {
  const load0 = loadavg()[0];
  await portRound(false); // warm-up
  const rounds = await alternated(
    () => portRound(false),
    () => portRound(true),
  );
  const of = (what: 'writes' | 'reads' | 'cold') => rounds.map((r) => ({ plain: r.plain[what], sealed: r.sealed[what] }));
  const busy = (s: 'plain' | 'sealed') => median(rounds.map((r) => r[s].busy)).toFixed(2);
  return [
    `The decorator over a bare SQLite log, ${N} constituents (load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after)`,
    costLine(`appends, ${IN_FLIGHT} in flight`, 'appends/s', of('writes'), false),
    `    cores kept busy during the appends (the process's CPU over their wall time, of 2): plain ${busy('plain')}, sealed ${busy('sealed')}`,
    ...threadLines('  an append', rounds.map((r) => ({ plain: r.plain.threads, sealed: r.sealed.threads }))),
    costLine('readTeam, pages of 1,000, keys in memory', 'events/s', of('reads'), false),
    costLine('readTeam, pages of 1,000, by a fresh process (one key read per page)', 'events/s', of('cold'), false),
  ];
}

// --- each piece alone ----------------------------------------------------------------------------

/** Microseconds per call of `f`, the median of five runs of `n`. */
function perCall(n: number, f: (i: number) => unknown): number {
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) f(i);
    runs.push(((performance.now() - t0) * 1000) / n);
  }
  return median(runs);
}

async function floors(): Promise<string[]> {
  const sealer = new Sealer(Sealer.newKey());
  const personal = JSON.stringify(fields(1));
  const sealed = sealer.sealText(personal, 'constituent-1:fields');
  const seal = perCall(20_000, () => sealer.sealText(personal, 'constituent-1:fields'));
  const open = perCall(20_000, () => sealer.openText(sealed, 'constituent-1:fields'));
  const json = perCall(20_000, () => JSON.parse(personal));
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-keys-'));
  try {
    const store = new SqliteKeyStore(path.join(dir, 'keys.sqlite'), new Sealer(Sealer.newKey()));
    const subjects = (from: number) => Array.from({ length: 512 }, (_, i) => `constituent-${from + i}`);
    const batches = 10;
    let t0 = performance.now();
    for (let b = 0; b < batches; b++) await store.keysFor(subjects(b * 512), true);
    const made = ((performance.now() - t0) * 1000) / (batches * 512);
    t0 = performance.now();
    for (let b = 0; b < batches; b++) await store.keysFor(subjects(b * 512), false);
    const fetched = ((performance.now() - t0) * 1000) / (batches * 512);
    t0 = performance.now();
    for (let i = 0; i < 200; i++) await store.keysFor([`constituent-${100_000 + i}`], true);
    const alone = ((performance.now() - t0) * 1000) / 200;
    await store.close();
    const us = (x: number) => `${x.toFixed(1)} µs`;
    return [
      `Each piece alone, per event or key (medians; load average ${loadavg()[0].toFixed(1)})`,
      `  AES-256-GCM seal of one event's personal fields (${personal.length} bytes of JSON, to text): ${us(seal)}; open: ${us(open)}; JSON.parse of the same, for scale: ${us(json)}`,
      `  a key made ahead, 512 to a transaction (generate, wrap, insert, one fsync; on the key store's thread once it has started, so wall time, not the main thread's): ${us(made)}; fetched 512 to a read (read, unwrap): ${us(fetched)}; made alone (its own fsync): ${us(alone)}`,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Which parts to run (`BENCH_SEALING_PARTS=http,port`, say), for working on one: every part by default. */
const PARTS = new Set((process.env.BENCH_SEALING_PARTS ?? 'http,log,port,floors').split(','));

export async function run(): Promise<{ name: string; lines: string[] }> {
  const part = async (name: string, f: () => Promise<string[]>) => (PARTS.has(name) ? f() : []);
  const lines = [...(await part('http', http)), ...(await part('log', feedFromLog)), ...(await part('port', port)), ...(await part('floors', floors))];
  return { name: `sealing personal fields (decisions.md §17): cost against plain, ${ROUNDS} alternated rounds, medians`, lines };
}

import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { metadataOf } from '../commands/context.js';
import { NO_STREAM } from '../eventlog/port.js';
import { constituentStream } from '../domain/constituent/events.js';
import { median, post } from './lib.js';
import type { LatencyResult, PeerRequest } from './webhook-peer.js';
import { startProduct, type Product } from './product.js';

const gc = () => (globalThis as { gc?: () => void }).gc?.();
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 500); // writes per second (issue 5's target load)
const LATENCY_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
/**
 * Writes at the same rate before the measured latency run, reported apart: a fresh process spends
 * its first seconds compiling its hot paths, which one second of warm-up (the other benches')
 * would measure instead of the latency (docs/bench-history.md).
 */
const WARM_UP_MS = Number(process.env.BENCH_WARM_UP_MS ?? 5_000);
// Rounds of 2,000 lasted a fraction of a second and their ratio swung 0.3-0.6x from run to run:
// longer rounds, a warm-up round of each side first, and the median and worst of five.
const BATCH = Number(process.env.BENCH_WEBHOOK_BATCH ?? 6_000); // deliveries per throughput round
const CONCURRENCY = 64; // the worker's default concurrency, used by the baseline loop too
const ROUNDS = 5;
const TARGET_MEDIAN = 0.5;
const TARGET_WORST = 0.4;
/** The pause before each round, so one round's leftovers (records written, WAL checkpoints) do not fall into the next. */
const SETTLE_MS = 300;

/**
 * CPU time used so far, in µs: the main thread's own (where the server and the dispatcher run;
 * the receiver is another process) and the whole process's. Per delivery it is
 * steadier than a rate on a shared machine, where other processes take turns on the cores.
 */
function cpuNow(): { main: number; all: number } {
  // utime and stime (fields 14 and 15), in clock ticks of 10 ms, after the parenthesised name.
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const { user, system } = process.cpuUsage();
  return { main: (Number(fields[11]) + Number(fields[12])) * 10_000, all: user + system };
}

/**
 * The subscriber and the latency run's writing client, in a process of their own
 * (webhook-peer.ts): a receiver that answers 204 at once and notes when each constituent's
 * webhook arrived.
 */
async function startPeer() {
  const child = fork(fileURLToPath(new URL('./webhook-peer.js', import.meta.url)), [], { stdio: 'inherit' });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 0;
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the webhook peer exited ${code} before listening`)));
  });
  child.on('message', (m: { id: number; ok?: unknown; err?: string }) => {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.err !== undefined) p?.reject(new Error(m.err));
    else p?.resolve(m.ok);
  });
  child.on('exit', (code) => {
    for (const p of pending.values()) p.reject(new Error(`the webhook peer exited ${code}`));
    pending.clear();
  });
  const ask = <T>(r: DistributiveOmit<PeerRequest, 'id'>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...r, id });
    });
  return {
    url: `http://127.0.0.1:${port}/hook`,
    /** Writes at RATE a second through the public API for `ms`; latency from each 2xx to its webhook's arrival. */
    latency: (p: Product, ms: number) => ask<LatencyResult>({ op: 'latency', origin: p.origin, auth: p.auth, rate: RATE, ms }),
    count: () => ask<number>({ op: 'count' }),
    waitCount: (n: number, timeoutMs = 60_000) => ask<number>({ op: 'waitCount', n, timeoutMs }),
    close: () => ask<null>({ op: 'close' }).catch(() => child.kill()),
  };
}
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type Peer = Awaited<ReturnType<typeof startPeer>>;

/** Delivery throughput: a burst of events appended to the log, timed until the receiver has them all. */
async function throughputRun(p: Product, rx: Peer, base: number): Promise<number> {
  const { log } = p.runtime.services;
  const before = await rx.count();
  const t0 = performance.now();
  const ctx = { team: p.team, source: 'Public API' as const, keyName: 'Bench', correlationId: 'bench', now: new Date() };
  await Promise.all(
    Array.from({ length: BATCH }, (_, i) =>
      log.append(constituentStream(base + i), [{ type: 'ConstituentCreated', data: { id: base + i, fields: { FirstName: 'Tp', LastName: `N${i}`, ConstituentName: `Tp N${i}` } }, metadata: metadataOf(ctx) }], NO_STREAM),
    ),
  );
  await rx.waitCount(before + BATCH);
  return BATCH / ((performance.now() - t0) / 1000);
}

/** The baseline: a plain keep-alive POST loop to the same receiver, as many in flight as the worker runs. */
async function baselineRun(rx: Peer): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ id: 'evt_1_1', type: 'constituent.created', created: 1, team: 1, version: 0, data: { FirstName: 'Tp', LastName: 'N1' } });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < BATCH) await post(agent, rx.url, body, { 'x-turnout-signature': 't=1,v1=' + '0'.repeat(64) });
    }),
  );
  agent.destroy();
  return BATCH / ((performance.now() - t0) / 1000);
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const p = await startProduct();
  const rx = await startPeer();
  try {
    const ep = await p.app.inject({
      method: 'POST',
      url: `/admin/v1/teams/${p.team}/webhook-endpoints`,
      headers: { authorization: 'Bearer bench-admin-token', 'content-type': 'application/json' },
      payload: { url: rx.url, events: ['constituent.created'] },
    });
    if (ep.statusCode !== 201) throw new Error(`creating the endpoint: ${ep.statusCode} ${ep.body}`);
    // WARM_UP_MS of writes first (a fresh process's are slow), reported apart, then the measured run.
    const cold = await rx.latency(p, WARM_UP_MS);
    const lat = await rx.latency(p, LATENCY_MS);
    // Warm-up: JIT, the sender's and the baseline's connection pools, SQLite's page cache.
    await baselineRun(rx);
    await throughputRun(p, rx, 9_000_000);
    const ours: number[] = [];
    const base: number[] = [];
    const cpu = { ours: { main: 0, all: 0 }, base: { main: 0, all: 0 } };
    const timed = async <T>(into: { main: number; all: number }, work: () => Promise<T>): Promise<T> => {
      const c0 = cpuNow();
      const out = await work();
      const c1 = cpuNow();
      into.main += c1.main - c0.main;
      into.all += c1.all - c0.all;
      return out;
    };
    // Baseline and Turnout alternate, a baseline round on either side of each of ours (B O B O ... B),
    // and each round of ours is compared with the mean of the two around it: on this shared machine
    // the baseline alone swings by half from round to round, and drift then hits both sides alike.
    // Every round starts on a settled process (the last round's leftovers written, a GC).
    const settle = async () => {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      gc();
    };
    await settle();
    base.push(await timed(cpu.base, () => baselineRun(rx)));
    for (let r = 0; r < ROUNDS; r++) {
      await settle();
      ours.push(await timed(cpu.ours, () => throughputRun(p, rx, 10_000_000 + r * BATCH)));
      await settle();
      base.push(await timed(cpu.base, () => baselineRun(rx)));
    }
    const perItem = (us: number, rounds: number) => (us / (rounds * BATCH)).toFixed(0);
    const ratios = ours.map((x, i) => x / ((base[i] + base[i + 1]) / 2));
    const mid = median(ratios);
    const worst = Math.min(...ratios);
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    return {
      name: 'webhooks',
      lines: [
        `latency from a write's 2xx to the receiver at ${lat.achieved.toFixed(0)} writes/s (target ${RATE}) for ${LATENCY_MS / 1000} s: p50 ${lat.p50.toFixed(1)} ms, p99 ${lat.p99.toFixed(1)} ms (target p99 < 50 ms: ${verdict(lat.p99 < 50)})${lat.failures ? `, ${lat.failures} writes failed` : ''}${lat.lost ? `, ${lat.lost} webhooks missing` : ''}`,
        `  after ${WARM_UP_MS / 1000} s of warm-up writes at the same rate, whose own figures (a fresh process) were p50 ${cold.p50.toFixed(1)} ms, p99 ${cold.p99.toFixed(1)} ms`,
        `delivery throughput, ${BATCH} events per round after a warm-up round, ${ROUNDS} rounds between ${ROUNDS + 1} baseline rounds: median ${median(ours).toFixed(0)} deliveries/s vs baseline keep-alive POST loop ${median(base).toFixed(0)} req/s (${CONCURRENCY} in flight)`,
        `  ratio median ${mid.toFixed(2)}x (target >= ${TARGET_MEDIAN}x: ${verdict(mid >= TARGET_MEDIAN)}), worst round ${worst.toFixed(2)}x (target >= ${TARGET_WORST}x: ${verdict(worst >= TARGET_WORST)})`,
        `  rounds: ratio (to the mean of the baseline rounds either side) ${ratios.map((x) => x.toFixed(2)).join(', ')}; ours ${ours.map((x) => x.toFixed(0)).join(', ')}; baseline ${base.map((x) => x.toFixed(0)).join(', ')}`,
        `  CPU per delivery (appending its event included): main thread ${perItem(cpu.ours.main, ROUNDS)} µs, process ${perItem(cpu.ours.all, ROUNDS)} µs; per baseline request: main thread ${perItem(cpu.base.main, ROUNDS + 1)} µs, process ${perItem(cpu.base.all, ROUNDS + 1)} µs`,
      ],
    };
  } finally {
    await rx.close();
    await p.close();
  }
}

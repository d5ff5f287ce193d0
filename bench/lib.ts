import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { Worker } from 'node:worker_threads';

/**
 * A small HTTP load generator and the arithmetic of comparing against a baseline. These
 * machines are noisy, so every figure is measured beside its baseline in the same run, in
 * alternating rounds, and reported as medians and ratios.
 */

export interface BenchRequest {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  headers?: Record<string, string>;
  /** `{{n}}` is replaced by the request's sequence number. */
  body?: string;
  /** `{{n}}` in header values is replaced too (an Idempotency-Key per request). */
  templatedHeaders?: boolean;
}

export interface LoadSpec {
  origin: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Sent round-robin. */
  requests: BenchRequest[];
  /**
   * Sends exactly this many requests (sequence numbers 0 to total-1), all measured, instead of
   * measuring for `durationMs` after `warmupMs`.
   */
  total?: number;
}

export interface LoadResult {
  latencies: number[];
  elapsedMs: number;
  errors: number;
  firstError: string | null;
}

export interface Measure {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  count: number;
  errors: number;
}

export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 0.5);

/**
 * Open-loop writes before a latency run's measured phase, unmeasured and reported apart: a fresh
 * process's first writes take 30-300 ms (JIT, the first run of each query, the sender thread's
 * own warm-up) and would set the p99 alone.
 */
export const WARM_UP_MS = Number(process.env.BENCH_WARM_UP_MS ?? 1_000);

/**
 * Open-loop load: starts `send(i)` at `rate` a second for `durationMs`, whatever the answers,
 * then waits for them all. The rate achieved is what the loop kept up, sends per second.
 */
export async function paced(rate: number, durationMs: number, send: (i: number) => Promise<void>): Promise<{ achieved: number }> {
  const total = Math.round((rate * durationMs) / 1000);
  const start = performance.now();
  const sent: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    sent.push(send(i));
  }
  await Promise.all(sent);
  return { achieved: total / ((performance.now() - start) / 1000) };
}

/** Runs one closed-loop load in its own thread (see load-worker.ts). */
export async function load(spec: LoadSpec): Promise<Measure> {
  const result = await new Promise<LoadResult>((resolve, reject) => {
    const worker = new Worker(new URL('./load-worker.js', import.meta.url), { workerData: spec });
    worker.once('message', (m: { ok?: LoadResult; err?: string }) => (m.ok ? resolve(m.ok) : reject(new Error(m.err))));
    worker.once('error', reject);
  });
  if (result.errors > 0) throw new Error(`${result.errors} requests failed during the measurement; first: ${result.firstError}`);
  const sorted = Float64Array.from(result.latencies).sort();
  const arr = Array.from(sorted);
  return {
    rps: (arr.length / result.elapsedMs) * 1000,
    p50: percentile(arr, 0.5),
    p90: percentile(arr, 0.9),
    p99: percentile(arr, 0.99),
    count: arr.length,
    errors: result.errors,
  };
}

export interface Comparison {
  baseline: Measure;
  subject: Measure;
  /** Median subject/baseline throughput ratio over the rounds. */
  ratio: number;
  rounds: Array<{ baseline: Measure; subject: Measure }>;
}

const gc = () => (globalThis as { gc?: () => void }).gc?.();

/**
 * Alternates baseline and subject for `rounds` rounds (so drift of the machine hits both) and
 * takes the median of each figure.
 */
export async function compare(rounds: number, baseline: () => Promise<Measure>, subject: () => Promise<Measure>): Promise<Comparison> {
  const all: Array<{ baseline: Measure; subject: Measure }> = [];
  for (let i = 0; i < rounds; i++) {
    gc();
    const b = await baseline();
    gc();
    const s = await subject();
    all.push({ baseline: b, subject: s });
  }
  const med = (side: 'baseline' | 'subject'): Measure => ({
    rps: median(all.map((r) => r[side].rps)),
    p50: median(all.map((r) => r[side].p50)),
    p90: median(all.map((r) => r[side].p90)),
    p99: median(all.map((r) => r[side].p99)),
    count: all.reduce((n, r) => n + r[side].count, 0),
    errors: all.reduce((n, r) => n + r[side].errors, 0),
  });
  return { baseline: med('baseline'), subject: med('subject'), ratio: median(all.map((r) => r.subject.rps / r.baseline.rps)), rounds: all };
}

const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const pad = (s: string, n: number) => s.padEnd(n);

export function formatMeasure(label: string, m: Measure): string {
  return `${pad(label, 34)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${pad(ms(m.p50), 9)} p90 ${pad(ms(m.p90), 9)} p99 ${ms(m.p99)}`;
}

/** Lines for one comparison: both medians, the ratio, each round, and the target verdicts. */
export function formatComparison(
  title: string,
  labels: { baseline: string; subject: string },
  c: Comparison,
  targets: Array<{ label: string; ok: boolean }> = [],
): string[] {
  return [
    title,
    '  ' + formatMeasure(`${labels.baseline} (baseline)`, c.baseline),
    '  ' + formatMeasure(labels.subject, c.subject),
    `  throughput ratio ${c.ratio.toFixed(2)}x  (rounds: ${c.rounds.map((r) => (r.subject.rps / r.baseline.rps).toFixed(2)).join(', ')})`,
    ...targets.map((t) => `  target ${t.label}: ${t.ok ? 'met' : 'MISSED'}`),
  ];
}

/** One JSON POST through node:http on the agent given (keep-alive): its status and body. */
export function post(agent: http.Agent, url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The main thread's CPU time so far, in µs (utime and stime of /proc/self/task/<pid>/stat, in
 * ticks of 10 ms): where the server runs, apart from the load generator's thread. Per request it
 * is steadier than a rate on a shared machine, where other processes take turns on the cores.
 */
/** CPU time (user and system, µs) of every thread of this process, by the OS's thread id. */
export function threadCpuUs(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(Number(tid), (Number(fields[11]) + Number(fields[12])) * 10_000);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

export function mainThreadCpuUs(): number {
  const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** This process's CPU, every thread's (µs). */
export function processCpuUs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

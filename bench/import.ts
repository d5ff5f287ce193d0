import { spawn } from 'node:child_process';
import Fastify from 'fastify';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchRequest, load, type Measure, processCpuUs, threadCpuUs } from './lib.js';
import { startTimeline, type Timeline } from './import-timeline.js';
import { person } from './names.js';
import { startProduct } from './product.js';

/**
 * Issue 29: `turnout import` (batches, decisions.md §13-14) at 2x or more the same run's single
 * durable POST (rows/s against req/s, 64 connections), and issue 17's 100,000 rows in < 30 s.
 */
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const TARGET_S = 30;
const TARGET_RATIO = 2;
const POST_CONNECTIONS = 64;
const POST_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
/**
 * Batch sizes to run the import at, each on a fresh server (`BENCH_IMPORT_BATCHES=100,250,500,1000`);
 * unset: the CLI's own default only.
 */
const BATCHES = (process.env.BENCH_IMPORT_BATCHES ?? '').split(',').map(Number).filter((n) => n > 0);
/** `BENCH_IMPORT_TIMELINE=1`: where the import's wall time goes, phase by phase (bench/import-timeline.ts). */
const TIMELINE = process.env.BENCH_IMPORT_TIMELINE === '1';
const COLUMNS = ['FirstName', 'LastName', 'Email1', 'Phone1', 'MailingCity', 'MailingState', 'MailingZipCode', 'IsEmailOk'];

function csv(rows: number): string {
  const lines = [COLUMNS.join(',')];
  for (let i = 0; i < rows; i++) {
    const p = person(i);
    lines.push(COLUMNS.map((c) => (p[c] === undefined || p[c] === null ? '' : String(p[c]))).join(','));
  }
  return lines.join('\n') + '\n';
}

/** Runs the built CLI as an operator would, stdout and stderr kept (stderr is not a terminal: plain lines). */
function turnout(args: string[], env: Record<string, string>, onSpawn?: (pid: number) => void): Promise<{ code: number; stdout: string; stderr: string; cpuUs: number; report: CliReport }> {
  const main = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  const report = new URL('./cpu-report.js', import.meta.url).href;
  // BENCH_IMPORT_CLI_PROF=<dir>: a CPU profile of the CLI there.
  const prof = process.env.BENCH_IMPORT_CLI_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_IMPORT_CLI_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, '--import', report, main, ...args], { env: { PATH: process.env.PATH, ...tuning(), ...env, ...batchEnv }, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  if (child.pid) onSpawn?.(child.pid);
  let stdout = '';
  let stderr = '';
  let cpu = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  (child.stdio[3] as NodeJS.ReadableStream).on('data', (d) => (cpu += d));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      const report: CliReport = cpu ? JSON.parse(cpu) : { user: NaN, system: NaN, timeOrigin: 0, marks: [] };
      resolve({ code: code ?? 1, stdout, stderr, cpuUs: report.user + report.system, report });
    }),
  );
}

/** What bench/cpu-report.ts writes at the CLI's exit: its CPU, and its User Timing marks from its time origin. */
interface CliReport {
  user: number;
  system: number;
  timeOrigin: number;
  marks: Array<[string, number]>;
}

/** The CLI's bench-only knobs (cli/import.ts), passed on when set: batch rows and batches in flight. */
const tuning = () => Object.fromEntries(['TURNOUT_IMPORT_BATCH_ROWS', 'TURNOUT_IMPORT_IN_FLIGHT'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])));

/** The CLI's batch size for this run (cli/import.ts reads it; unset: its default). */
let batchEnv: Record<string, string> = {};

/**
 * The baseline: the same CLI and file against a bare Fastify server that stores nothing. Its
 * routes answer the CLI's probe and each batch with 201 for every row and the row back, about
 * the size of the product's answer. It is the floor of the HTTP round trips and the CLI's own work on this
 * machine, what any server would cost at the least.
 */
async function startBare(): Promise<{ origin: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  let n = 0;
  app.get('/admin/v1/teams/:team/activity', async () => ({ activity: [], total: 0 }));
  app.post('/admin/v1/teams/:team/constituents/batch', { bodyLimit: 16 * 1024 * 1024 }, async (request) => ({
    results: (request.body as { items: object[] }).items.map((item) => ({ status: 201, created: true, constituent: { PkConstituent: ++n, ...item } })),
  }));
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { origin, close: () => app.close() };
}

async function timedImport(file: string, origin: string, team: number, timeline?: Timeline) {
  const t0 = performance.now();
  const r = await turnout(['import', file, '--team', String(team)], { TURNOUT_URL: origin, TURNOUT_ADMIN_TOKEN: 'bench-admin-token' }, timeline?.child);
  const t1 = performance.now();
  const seconds = (t1 - t0) / 1000;
  if (r.code !== 0) throw new Error(`turnout import exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  const marks = r.report.marks.map(([name, t]): [string, number] => [name, r.report.timeOrigin + t]);
  const lines = timeline?.report(marks, performance.timeOrigin + t0, performance.timeOrigin + t1) ?? [];
  return { seconds, stdout: r.stdout, cpuUs: r.cpuUs, timeline: lines };
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  if (!BATCHES.length) return { name: 'import', lines: await measureImport(ROWS) };
  const lines: string[] = [];
  for (const size of BATCHES) {
    batchEnv = { TURNOUT_IMPORT_BATCH_ROWS: String(size) };
    lines.push(`batches of ${size} rows:`, ...(await measureImport(ROWS)).map((l) => `  ${l}`));
  }
  batchEnv = {};
  return { name: 'import', lines };
}

/**
 * The other threads' CPU during the import, µs a row: those the product started after its writer
 * and projector threads (its other worker threads: the WAL checkpointer, the key store...) and
 * those there before it (V8's GC and compiler helpers, libuv's pool), which all share one name.
 */
function otherThreads(c0: Map<number, number>, c1: Map<number, number>, known: Set<number>, before: Set<number>, rows: number): string {
  let product = 0;
  let platform = 0;
  for (const [tid, us] of c1) {
    if (known.has(tid)) continue;
    const used = (us - (c0.get(tid) ?? 0)) / rows;
    if (before.has(tid)) platform += used;
    else product += used;
  }
  return `the product's other worker threads ${product.toFixed(0)}, V8 and libuv helpers ${platform.toFixed(0)}`;
}

/** The same server's single durable POST /api/v1/constituents, 64 connections: what the import is held against. */
async function singlePosts(origin: string, auth: string, durationMs: number): Promise<Measure> {
  // Emails the import's rows (person(i)) never use.
  const requests: BenchRequest[] = Array.from({ length: 200 }, (_, i) => ({
    method: 'POST',
    path: '/api/v1/constituents',
    headers: { 'content-type': 'application/json', authorization: auth },
    body: JSON.stringify({ ...person(i), Email1: `single-${i}-{{n}}@example.org` }),
  }));
  return load({ origin, connections: POST_CONNECTIONS, warmupMs: Math.min(1_000, durationMs), durationMs, requests });
}

/**
 * Imports `rows` rows through the bare baseline, then into the product, with the product's
 * single-POST rate measured just before and just after the import on the same server; the
 * figures' lines.
 */
export async function measureImport(rows: number, postMs = POST_MS): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-import-'));
  try {
    const file = path.join(dir, 'constituents.csv');
    writeFileSync(file, csv(rows));
    const bare = await startBare();
    const floor = await timedImport(file, bare.origin, 1).finally(() => bare.close());
    const existing = new Set(threadCpuUs().keys());
    const product = await startProduct();
    // The product's threads by start order: the log's writer, then the projector thread (constituents.ts).
    const threads = [process.pid, ...[...threadCpuUs().keys()].filter((t) => !existing.has(t)).sort((a, b) => a - b)].slice(0, 3);
    let ours: { seconds: number; stdout: string; cpuUs: number; timeline: string[] };
    let posts: Measure[];
    let perRow: number[];
    let others = '';
    try {
      const before = await singlePosts(product.origin, product.auth, postMs);
      const c0 = threadCpuUs();
      const p0 = processCpuUs();
      ours = await timedImport(file, product.origin, product.team, TIMELINE ? startTimeline(threads) : undefined);
      // Up to the import's last answer, which waited for the projector thread's position (read-your-writes).
      const c1 = threadCpuUs();
      const p1 = processCpuUs();
      perRow = threads.map((t) => ((c1.get(t) ?? 0) - (c0.get(t) ?? 0)) / rows);
      perRow.push((p1 - p0) / rows - perRow.reduce((a, b) => a + b, 0));
      others = otherThreads(c0, c1, new Set(threads), existing, rows);
      posts = [before, await singlePosts(product.origin, product.auth, postMs)];
    } finally {
      await product.close();
    }
    const rate = rows / ours.seconds;
    const floorRate = rows / floor.seconds;
    const postRate = (posts[0].rps + posts[1].rps) / 2;
    const ratio = rate / postRate;
    const met = ours.seconds < TARGET_S * (rows / 100_000);
    return [
      `turnout import of ${rows.toLocaleString('en-US')} constituents (CSV, ${COLUMNS.length} columns), the built CLI against the embedded server in this process`,
      `  ${ours.seconds.toFixed(1)} s, ${Math.round(rate).toLocaleString('en-US')} rows/s   target: 100,000 rows in < ${TARGET_S} s (${Math.round(100_000 / TARGET_S).toLocaleString('en-US')} rows/s)   ${met ? 'met' : 'MISSED'}`,
      `  ${ours.stdout.trim().split('\n').join('; ')}`,
      `  baseline: the same CLI and file against a bare Fastify route that stores nothing: ${floor.seconds.toFixed(1)} s, ${Math.round(floorRate).toLocaleString('en-US')} rows/s (ours ${(rate / floorRate).toFixed(2)}x)`,
      `  single POST /api/v1/constituents on the same server, ${POST_CONNECTIONS} connections, before and after the import: ${posts.map((p) => `${Math.round(p.rps).toLocaleString('en-US')} req/s (p99 ${p.p99.toFixed(1)} ms)`).join(', ')}`,
      `  import against single POST: ${ratio.toFixed(2)}x (rows/s against the mean req/s)   target: >= ${TARGET_RATIO}x   ${ratio >= TARGET_RATIO ? 'met' : 'MISSED'}`,
      `  server CPU per row during the import: main ${perRow[0].toFixed(0)} µs, log writer ${perRow[1].toFixed(0)} µs, projector thread ${perRow[2].toFixed(0)} µs, other threads ${perRow[3].toFixed(0)} µs (${others}); in all ${perRow.reduce((a, b) => a + b, 0).toFixed(0)} µs (load average ${loadavg()[0].toFixed(1)} after)`,
      `  the CLI's own CPU per row: ${(ours.cpuUs / rows).toFixed(0)} µs (against the bare route ${(floor.cpuUs / rows).toFixed(0)} µs); wall per row ${((ours.seconds * 1e6) / rows).toFixed(0)} µs on ${cpus().length} cores`,
      ...ours.timeline.map((l) => `  ${l}`),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

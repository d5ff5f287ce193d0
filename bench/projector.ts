import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { type LogFileReader, openLogReader } from '../eventlog/sqlite-file.js';
import type { Projector } from '../projections/engine/projector.js';
import { HELD_STEP, SqliteProjection } from '../projections/engine/sqlite-step.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { LOG_FILE } from '../runtime/read-models.js';
import { loadProjectors } from '../runtime/thread-projectors.js';
import { seed } from './constituents.js';
import { startProduct } from './product.js';

/**
 * Issue 29: what the projector thread's live step costs, per step and per event. N constituents
 * (`BENCH_PROJECTOR_N`, default 6,000) are created in the log as the write bench's POSTs create
 * them; then, on this thread, the product's projectors (the thread's own set) apply that log to a
 * new read database in live steps of k events (the projector thread's step, `SqliteProjection.step`,
 * with its search sync as its loop has it), for several k. CPU is the process's (its other
 * threads idle meanwhile), so the machine's load moves it little. A line in bulk mode (the
 * offline rebuild's step) is the floor the live step is measured against.
 * `BENCH_SECURE_DELETE=off` runs the same with SQLite's secure_delete off (what decisions.md
 * §17's zeroing costs; the product never runs so).
 */
const N = Number(process.env.BENCH_PROJECTOR_N ?? 6_000);
const SIZES = (process.env.BENCH_PROJECTOR_STEPS ?? '1,4,16,64,256,2000').split(',').map(Number);
const WARM = 300;
/** How often a step syncs the search tables, as the thread's loop has it do once a second (`BENCH_PROJECTOR_SYNC_MS`). */
const SYNC_MS = Number(process.env.BENCH_PROJECTOR_SYNC_MS ?? 1_000);
/** A pause between steps, as the projector thread sleeps between commits (`BENCH_PROJECTOR_SLEEP_MS`). */
const SLEEP_MS = Number(process.env.BENCH_PROJECTOR_SLEEP_MS ?? 0);
/**
 * Events a live step must hold for its writes to be held to its end (engine/sqlite-step.ts
 * HELD_STEP unless `BENCH_PROJECTOR_HELD` says; `Infinity`: never), to measure where it pays.
 */
const HELD_FROM = process.env.BENCH_PROJECTOR_HELD ? Number(process.env.BENCH_PROJECTOR_HELD) : undefined;

/**
 * The process's CPU, in ns: the product's own threads are idle meanwhile, and getrusage counts the
 * running thread to the moment (a thread's schedstat moves only at ticks and switches, which
 * would credit a step's tail to the pause after it).
 */
const cpuNs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1_000;
};

interface Run {
  steps: number;
  events: number;
  stepNs: number;
  syncNs: number;
}

/**
 * CPU by part (`BENCH_PROJECTOR_SPLIT=1`): each projector's apply, the log's read, the commit; each
 * part's figure includes about 2 µs of the getrusage calls that time it.
 */
const SPLIT = process.env.BENCH_PROJECTOR_SPLIT === '1';
const parts = new Map<string, number>();
function timed<A extends unknown[], R>(name: string, fn: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    const t0 = cpuNs();
    try {
      return fn(...args);
    } finally {
      parts.set(name, (parts.get(name) ?? 0) + (cpuNs() - t0) / 1e6);
    }
  };
}
function timeParts(projectors: Projector[], log: LogFileReader, core: SqliteReadCore): void {
  for (const p of projectors) {
    const apply = p.apply.bind(p);
    // The projectors' awaits are on the synchronous core: the wall time is theirs.
    (p as { apply: Projector['apply'] }).apply = timed(p.name, (e, store) => apply(e, store));
  }
  log.readAfter = timed('log read', log.readAfter.bind(log));
  log.head = timed('log head', log.head.bind(log));
  core.commit = timed('commit', core.commit.bind(core));
  core.begin = timed('begin', core.begin.bind(core));
  core.setCheckpoint = timed('checkpoints', core.setCheckpoint.bind(core));
  core.getCheckpoint = timed('checkpoints', core.getCheckpoint.bind(core));
  core.syncSearch = timed('search sync', core.syncSearch.bind(core));
}

async function measure(logFile: string, dir: string, k: number, bulk: boolean): Promise<Run> {
  const file = path.join(dir, `read-${k}-${bulk ? 'bulk' : 'live'}.sqlite`);
  const core = new SqliteReadCore(file, { fresh: bulk });
  if (!bulk) core.db.pragma('wal_autocheckpoint = 0');
  if (process.env.BENCH_SECURE_DELETE === 'off') core.db.pragma('secure_delete = OFF');
  const log = openLogReader(logFile);
  try {
    const projectors = await loadProjectors(undefined, { db: core.db, log, bulk });
    if (SPLIT) timeParts(projectors, log, core);
    const projection = new SqliteProjection(core, projectors, log, { bulk, heldFrom: HELD_FROM });
    projection.prepare();
    // The first events (the team, its key) and JIT warm-up, unmeasured.
    await projection.step(WARM);
    const run: Run = { steps: 0, events: 0, stepNs: 0, syncNs: 0 };
    let synced = performance.now();
    for (;;) {
      // As the thread's loop does (thread-loop.ts): the search tables synced in the step about once a second.
      const syncSearch = !bulk && performance.now() - synced >= SYNC_MS;
      if (syncSearch) synced = performance.now();
      const t0 = cpuNs();
      const step = await projection.step(k, { syncSearch });
      run.stepNs += cpuNs() - t0;
      run.steps++;
      run.events += step.read;
      if (step.caughtUp) break;
      if (SLEEP_MS) await new Promise((resolve) => setTimeout(resolve, SLEEP_MS));
    }
    if (!bulk) {
      const t1 = cpuNs();
      core.syncSearch();
      run.syncNs += cpuNs() - t1;
    }
    return run;
  } finally {
    log.close();
    core.close();
  }
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const product = await startProduct();
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-projector-'));
  try {
    await seed(product, N);
    const logFile = path.join(product.dir, LOG_FILE);
    const load0 = loadavg()[0];
    const lines: string[] = [];
    const fmt = (label: string, r: Run) =>
      `  ${label.padEnd(22)} ${r.steps.toString().padStart(6)} steps  ${((r.stepNs + r.syncNs) / 1e3 / r.events).toFixed(1).padStart(7)} µs an event (step ${(r.stepNs / 1e3 / r.events).toFixed(1)}, search sync at the end ${(r.syncNs / 1e3 / r.events).toFixed(1)})  ${(r.stepNs / 1e3 / r.steps).toFixed(0).padStart(7)} µs a step`;
    const live: Array<{ k: number; r: Run }> = [];
    for (const k of SIZES) {
      parts.clear();
      const r = await measure(logFile, dir, k, false);
      live.push({ k, r });
      lines.push(fmt(`live, steps of ${k}`, r));
      if (SPLIT) lines.push(`    CPU µs an event: ${[...parts].sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${((ms * 1e3) / r.events).toFixed(1)}`).join(', ')}`);
    }
    if (process.env.BENCH_PROJECTOR_BULK !== 'off') lines.push(fmt('bulk (rebuild), 20,000', await measure(logFile, dir, 20_000, true)));
    // Per step and per event, by least squares over the live runs: cost of a step = a + b * events.
    const xs = live.map(({ r }) => r.events / r.steps);
    const ys = live.map(({ r }) => r.stepNs / 1e3 / r.steps);
    const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
    const my = ys.reduce((a, b) => a + b, 0) / ys.length;
    const b = xs.reduce((s, x, i) => s + (x - mx) * (ys[i] - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0);
    lines.push(`  a live step costs about ${(my - b * mx).toFixed(0)} µs fixed + ${b.toFixed(1)} µs an event (least squares over the live lines)`);
    return {
      name: `projector: ${N.toLocaleString('en-US')} constituent creates applied by the projector thread's step on one thread, writes held from ${HELD_FROM ?? HELD_STEP} events a step, secure_delete ${process.env.BENCH_SECURE_DELETE === 'off' ? 'OFF' : 'on'} (load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after)`,
      lines,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await product.close();
  }
}

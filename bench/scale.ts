import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RecordedEvent } from '../domain/shared/events.js';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { LOG_FILE } from '../runtime/read-models.js';
import { rebuildReadModels } from '../runtime/rebuild.js';
import { type BenchRequest, load, type Measure } from './lib.js';
import { nameTerms, person, random } from './names.js';
import { measureErase } from './scale-erase.js';
import { measurePrepare } from './scale-prepare.js';
import { memory, type ServerProcess, startServer, until200 } from './scale-server.js';

/**
 * Issue 13's targets at scale: N constituents and N/10 updates written through the real server's
 * HTTP API, then a restart (SIGTERM, start again) and each figure beside its target.
 * `npm run bench -- scale`; BENCH_SCALE_N sets N (default 1,000,000).
 */

const ADMIN = 'bench-admin-token';
const WRITE_CONNECTIONS = 64;
/** Distinct bodies the writes cycle through; the e-mail look-ups rebuild a written address from it. */
const TEMPLATES = 500;

export interface ScaleOptions {
  n: number;
  /** The compiled api/server.js to run. */
  server: string;
  /** Searches of 3 characters, and of 1-2 characters, after the start (500 in all by default). */
  searches3?: number;
  searches12?: number;
  /** Email look-ups, reads by id and /healthz baseline requests. */
  lookups?: number;
  /** Where phases are told while it runs (stderr). */
  note?: (line: string) => void;
  /** A data dir to write into and keep afterwards (BENCH_SCALE_DIR), instead of a temporary one. */
  keepDir?: string;
}

interface Figure {
  figure: string;
  value: string;
  target: string;
  met: boolean | null;
  /** Said below the table. */
  note?: string;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const msText = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);

async function call(origin: string, method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const r = await fetch(origin + url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${text}`);
  return JSON.parse(text);
}

/** One request at a time (latency, not throughput), `count` of them over `requests` in turn. */
const sequential = (origin: string, requests: BenchRequest[], count = requests.length): Promise<Measure> =>
  load({ origin, connections: 1, warmupMs: 0, durationMs: 0, requests, total: count });

/**
 * Reads and parses the whole log through the log's reader (openLogReader, chunks of 20,000 events)
 * and applies nothing: issue 32's baseline, reading and parsing the log alone. (The rebuild's
 * first thread reads it otherwise, its texts as one blob a chunk: runtime/rebuild-relay.ts.)
 */
function readLogAlone(dataDir: string): { events: number; ms: number; cpuMs: number } {
  const t0 = performance.now();
  // This thread alone works meanwhile, so the process's CPU time is the read's.
  const cpu0 = process.cpuUsage();
  let events = 0;
  walkLog(dataDir, (chunk) => (events += chunk.length));
  const cpu = process.cpuUsage(cpu0);
  return { events, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Every event of the data dir's log, in chunks of 20,000, read and parsed. */
function walkLog(dataDir: string, each: (chunk: RecordedEvent[]) => void): void {
  const log = openLogReader(path.join(dataDir, LOG_FILE));
  try {
    for (let after = 0n; ; ) {
      const chunk = log.readAfter(after, 20_000);
      each(chunk);
      if (chunk.length < 20_000) break;
      after = chunk[chunk.length - 1].position.commit;
    }
  } finally {
    log.close();
  }
}

/** The data dir's files and their sizes, biggest first, and their total. */
export function dataDirSize(dataDir: string): { total: number; files: Array<[string, number]> } {
  const files: Array<[string, number]> = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else files.push([path.relative(dataDir, p), statSync(p).size]);
    }
  };
  walk(dataDir);
  files.sort((a, b) => b[1] - a[1]);
  return { total: files.reduce((n, [, size]) => n + size, 0), files };
}

const mbText = (bytes: number) => `${(bytes / 1e6).toLocaleString('en-US', { maximumFractionDigits: 1 })} MB`;
const sizeLine = (label: string, dataDir: string) => {
  const { total, files } = dataDirSize(dataDir);
  return `${label}: ${mbText(total)} (${files.filter(([, n]) => n >= 1e6).map(([f, n]) => `${f} ${mbText(n)}`).join(', ')})`;
};

/**
 * The rebuild of every read model from the log (issue 13 point 4), offline on the data dir the
 * server just left, through the entry point `turnout rebuild` uses (runtime/read-models.ts),
 * between two reads of the log alone (issue 32 item 3: its rate against theirs, their mean).
 */
async function measureRebuild(dataDir: string): Promise<{ figures: Figure[]; lines: string[] }> {
  const before = readLogAlone(dataDir);
  const { events, ms, threads } = await rebuildReadModels(dataDir);
  const after = readLogAlone(dataDir);
  const rate = events / (ms / 1000);
  const readRates = [before, after].map((r) => r.events / (r.ms / 1000));
  const readRate = (readRates[0] + readRates[1]) / 2;
  const ratio = rate / readRate;
  // On two free cores the rebuild lasts about as long as its busier thread works, or half of all
  // its threads' work where that is more (three threads: the search index's beside the other two
  // at the end): that time against the read's CPU says what a quiet machine's ratio would be,
  // whatever the load now.
  const readCpu = Math.min(before.cpuMs, after.cpuMs);
  const cpus = threads.map((t) => t.cpuMs ?? 0);
  const busiest = Math.max(Math.max(...cpus), cpus.reduce((a, b) => a + b, 0) / 2);
  const threadText = threads.map((t) => `${t.name} ${t.cpuMs === null ? '?' : (t.cpuMs / 1000).toFixed(1)} s CPU in ${(t.ms / 1000).toFixed(1)} s`).join(', ');
  return {
    figures: [
      { figure: 'rebuild of every read model from the log', value: `${fmt(rate)} events/s (${fmt(events)} events in ${(ms / 1000).toFixed(1)} s)`, target: '>= 50,000 events/s', met: rate >= 50_000 },
      { figure: 'rebuild against reading the log alone', value: `${ratio.toFixed(2)}x`, target: '>= 0.25x', met: ratio >= 0.25 },
    ],
    lines: [
      `  baseline: the log read and parsed alone, before and after the rebuild: ${readRates.map((r) => `${fmt(r)} events/s`).join(', ')} (${((1000 * 1000) / readRate).toFixed(1)} µs an event); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
      `  the rebuild's threads: ${threadText}; the read alone ${(readCpu / 1000).toFixed(1)} s CPU` +
        (busiest ? `, so on two free cores about ${(readCpu / busiest).toFixed(2)}x (the read's CPU time over the busier thread's, or half of all threads' where more)` : ''),
      ...timelineLines(threads),
      `  peak RSS of the process so far (maxRSS): ${fmt(process.resourceUsage().maxRSS / 1024)} MB`,
      `  ${sizeLine('data dir after the rebuild', dataDir)}`,
    ],
  };
}

/**
 * Each rebuild thread's stretches, from the rebuild's start: wall, CPU, waiting for a core
 * (queued) and the rest blocked (a lock, the other threads' messages, the disk), and its waits.
 */
function timelineLines(threads: Awaited<ReturnType<typeof rebuildReadModels>>['threads']): string[] {
  const origin = Math.min(...threads.flatMap((t) => t.timeline.spans.map((s) => s.start)));
  const sec = (ms: number) => (ms / 1000).toFixed(1);
  return threads.map((t) => {
    const spans = t.timeline.spans.map((s) => {
      const wall = s.end - s.start;
      const blocked = s.cpuMs === null || s.queuedMs === null ? '?' : sec(Math.max(0, wall - s.cpuMs - s.queuedMs));
      return `${s.what} ${sec(s.start - origin)}-${sec(s.end - origin)} s (CPU ${s.cpuMs === null ? '?' : sec(s.cpuMs)}, queued ${s.queuedMs === null ? '?' : sec(s.queuedMs)}, blocked ${blocked})`;
    });
    const waits = Object.entries(t.timeline.waits).map(([what, w]) => `${what} ${sec(w.ms)} s in ${fmt(w.times)}`);
    const notes = Object.entries(t.timeline.notes).map(([what, n]) => `${what} ${fmt(n)}`);
    return `  ${t.name}: ${spans.join('; ')}${waits.length ? `; waits: ${waits.join(', ')}` : ''}${notes.length ? `; ${notes.join(', ')}` : ''}`;
  });
}

/** Only the rebuild and the data dir's size, on a data dir a run with BENCH_SCALE_DIR kept (BENCH_PART=rebuild). */
export async function measureRebuildOnly(dataDir: string): Promise<string[]> {
  const lines = [sizeLine('data dir before the rebuild', dataDir)];
  const { figures, lines: more } = await measureRebuild(dataDir);
  for (const f of figures) lines.push(`  ${f.figure}: ${f.value} (target ${f.target}: ${f.met ? 'met' : 'MISSED'})`);
  return [...lines, ...more];
}

interface StartPhase {
  figures: Figure[];
  lines: string[];
}

/**
 * Issue 13's figures of a start on a written data dir: /healthz and /readyz from the spawn, memory,
 * searches, look-ups and reads one at a time. `probe` is the id just before the N constituents'.
 */
async function measureStart(server: string, dir: string, key: string, probe: number, n: number, counts: { searches3: number; searches12: number; lookups: number }): Promise<StartPhase> {
  const { searches3, searches12, lookups } = counts;
  const auth = { authorization: `Bearer ${key}` };
  const started = await startServer(server, dir, ADMIN);
  try {
    let catchingUp: string | null = null;
    const healthMs = await until200(started, '/healthz');
    // The first answer that names a follower catching up (before that, the port answers alone).
    const readyMs = await until200(started, '/readyz', 600_000, (status, body) => {
      if (!catchingUp && body.includes('catching_up')) catchingUp = `${status} ${body}`;
    });
    const atReady = memory(started.child.pid!);
    const rnd = random(13);
    const search = (term: string): BenchRequest => ({ method: 'GET', path: `/api/v1/constituents?search=${encodeURIComponent(term)}`, headers: auth });
    const t0 = performance.now();
    await call(started.origin, 'GET', search(nameTerms(1, [3], rnd)[0]).path, auth);
    const firstSearchMs = performance.now() - t0;
    const healthz = await sequential(started.origin, [{ method: 'GET', path: '/healthz' }], lookups);
    const three = await sequential(started.origin, nameTerms(searches3, [3], rnd).map(search));
    const short = await sequential(started.origin, nameTerms(searches12, [1, 2], rnd).map(search));
    const emails = await sequential(
      started.origin,
      Array.from({ length: lookups }, () => {
        const i = Math.floor(rnd() * n);
        return { method: 'GET', path: `/api/v1/constituents?email=${encodeURIComponent(String(person(i % TEMPLATES, String(i)).Email1))}`, headers: auth };
      }),
    );
    const byId = await sequential(
      started.origin,
      Array.from({ length: lookups }, () => ({ method: 'GET', path: `/api/v1/constituents/${probe + 1 + Math.floor(rnd() * n)}`, headers: auth })),
    );
    const afterSearches = memory(started.child.pid!);
    const progress = started.output().split('\n').filter((l) => /catching up|caught up/.test(l));
    const searched = 1 + searches3 + searches12;
    const peak = Math.max(atReady?.peakMb ?? NaN, afterSearches?.peakMb ?? NaN);
    return {
      figures: [
        { figure: 'start to /healthz 200', value: msText(healthMs), target: '<= 1 s', met: healthMs <= 1000 },
        { figure: 'start to /readyz 200', value: msText(readyMs), target: '<= 2 s', met: readyMs <= 2000 },
        { figure: 'peak RSS during start (VmHWM at ready)', value: `${fmt(atReady?.peakMb ?? NaN)} MB`, target: '<= 400 MB', met: (atReady?.peakMb ?? Infinity) <= 400 },
        { figure: `peak RSS after ${searched} searches (VmHWM; VmRSS ${fmt(afterSearches?.nowMb ?? NaN)} MB)`, value: `${fmt(peak)} MB`, target: '<= 400 MB', met: peak <= 400 },
        { figure: 'first search after start', value: msText(firstSearchMs), target: '<= 100 ms', met: firstSearchMs <= 100 },
        { figure: `search, 3 characters from names, p99 (${searches3})`, value: msText(three.p99), target: '< 20 ms', met: three.p99 < 20 },
        { figure: `search, 1-2 characters, p99 (${searches12})`, value: msText(short.p99), target: '< 300 ms', met: short.p99 < 300 },
        { figure: `email look-up, p99 (${lookups})`, value: msText(emails.p99), target: '< 10 ms', met: emails.p99 < 10 },
        { figure: `read by id, p99 (${lookups})`, value: msText(byId.p99), target: '< 10 ms', met: byId.p99 < 10 },
      ],
      lines: [
        `  baseline: GET /healthz, one at a time, p50 ${msText(healthz.p50)} p99 ${msText(healthz.p99)}; searches of 3 characters p50 ${msText(three.p50)}, of 1-2 p50 ${msText(short.p50)}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
        `  /readyz while catching up: ${catchingUp ?? '(never seen: ready at the first answer)'}`,
        ...progress.map((l) => `  server: ${l.trim()}`),
      ],
    };
  } finally {
    await started.stop();
  }
}

/** The data dir as the server left it, against issue 29's target (1,000,000 creates and 100,000 updates: at most 1.5 GB). */
function sizeFigure(dir: string, n: number): Figure {
  const { total } = dataDirSize(dir);
  const limit = 1.5e9 * (n / 1_000_000);
  return { figure: 'data dir as the server left it', value: mbText(total), target: `<= ${mbText(limit)}`, met: total <= limit };
}

/** The start, searches and size on a data dir a run with BENCH_SCALE_DIR kept (BENCH_PART=start), through a new key of its team. */
export async function measureStartOnly(server: string, dir: string): Promise<string[]> {
  const n = constituentsIn(dir);
  const figures = [sizeFigure(dir, n)];
  const setup = await startServer(server, dir, ADMIN);
  let key: string;
  let probe: number;
  try {
    await until200(setup, '/readyz');
    const admin = { authorization: `Bearer ${ADMIN}` };
    const team = (await call(setup.origin, 'GET', '/admin/v1/teams', admin)).teams[0].id as number;
    key = (await call(setup.origin, 'POST', `/admin/v1/teams/${team}/api-keys`, admin, { name: 'Scale start', scope: 'read_write' })).key as string;
    probe = (await call(setup.origin, 'GET', '/api/v1/constituents?pageSize=1', { authorization: `Bearer ${key}` })).constituents[0].PkConstituent as number;
  } finally {
    await setup.stop();
  }
  const start = await measureStart(server, dir, key, probe, n - 1, { searches3: 400, searches12: 100, lookups: 300 });
  figures.push(...start.figures);
  return [...table(figures), ...start.lines];
}

/** How many constituents the data dir's log created. */
function constituentsIn(dir: string): number {
  let count = 0;
  walkLog(dir, (chunk) => {
    for (const e of chunk) if (e.type === 'ConstituentCreated') count++;
  });
  return count;
}

function table(figures: Figure[]): string[] {
  const width = Math.max(...figures.map((f) => f.figure.length));
  const valueWidth = Math.max(...figures.map((f) => f.value.length));
  return [
    `  ${'figure'.padEnd(width)}  ${'value'.padEnd(valueWidth)}  ${'target'.padEnd(18)}  verdict`,
    ...figures.map((f) => `  ${f.figure.padEnd(width)}  ${f.value.padEnd(valueWidth)}  ${f.target.padEnd(18)}  ${f.met === null ? '-' : f.met ? 'met' : 'MISSED'}`),
    ...figures.filter((f) => f.note).map((f) => `  ${f.note}`),
  ];
}

export async function measureScale(options: ScaleOptions): Promise<string[]> {
  const { n, server } = options;
  const note = options.note ?? ((line: string) => process.stderr.write(`scale: ${line}\n`));
  const searches3 = options.searches3 ?? 400;
  const searches12 = options.searches12 ?? 100;
  const lookups = options.lookups ?? 300;
  const updates = Math.floor(n / 10);
  const dir = options.keepDir ?? mkdtempSync(path.join(tmpdir(), 'turnout-bench-scale-'));
  if (options.keepDir) mkdirSync(dir, { recursive: true });
  const lines: string[] = [];
  let current: ServerProcess | null = null;
  try {
    // ---- writing, through the product's own HTTP API ----
    current = await startServer(server, dir, ADMIN);
    await until200(current, '/readyz', 60_000);
    const origin = current.origin;
    const admin = { authorization: `Bearer ${ADMIN}` };
    const team = (await call(origin, 'POST', '/admin/v1/teams', admin, { name: 'Scale' })).team.id as number;
    const key = (await call(origin, 'POST', `/admin/v1/teams/${team}/api-keys`, admin, { name: 'Scale', scope: 'read_write' })).key as string;
    const auth = { authorization: `Bearer ${key}` };
    const json = { ...auth, 'content-type': 'application/json' };
    // The ids after this one's are the N constituents' (one process allocates them in order).
    const probe = (await call(origin, 'POST', '/api/v1/constituents', auth, { LastName: 'Probe' })).constituent.PkConstituent as number;
    note(`creating ${fmt(n)} constituents through POST /api/v1/constituents (${WRITE_CONNECTIONS} connections)`);
    const created = await load({
      origin,
      connections: WRITE_CONNECTIONS,
      warmupMs: 0,
      durationMs: 0,
      total: n,
      requests: Array.from({ length: TEMPLATES }, (_, i) => ({ method: 'POST', path: '/api/v1/constituents', headers: json, body: JSON.stringify(person(i, '{{n}}')) })),
    });
    note(`updating ${fmt(updates)} of them through PATCH /api/v1/constituents/{id}`);
    const updated = await load({
      origin,
      connections: WRITE_CONNECTIONS,
      warmupMs: 0,
      durationMs: 0,
      total: updates,
      requests: Array.from({ length: updates }, (_, k) => ({ method: 'PATCH', path: `/api/v1/constituents/${probe + 1 + ((k * 10) % n)}`, headers: json, body: '{"Nickname":"Upd{{n}}"}' })),
    });
    await call(origin, 'GET', `/api/v1/constituents/${probe + n}`, auth);
    lines.push(`${fmt(n)} constituents (POST ${fmt(created.rps)}/s) and ${fmt(updates)} updates (PATCH ${fmt(updated.rps)}/s) through the HTTP API, then SIGTERM and a start on the same data directory`);
    await current.stop();
    current = null;

    // ---- the start ----
    note('restarting');
    const start = await measureStart(server, dir, key, probe, n, { searches3, searches12, lookups });
    const figures: Figure[] = [sizeFigure(dir, n), ...start.figures];
    // Before the rebuild replaces the read models the server built live.
    const liveSize = sizeLine('data dir as the server left it', dir);
    const rebuilt = await measureRebuild(dir);
    figures.push(...rebuilt.figures);
    lines.push(...table(figures), ...start.lines, `  ${liveSize}`, ...rebuilt.lines);
    return lines;
  } finally {
    await current?.stop();
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const n = Number(process.env.BENCH_SCALE_N ?? 1_000_000);
  if (!Number.isInteger(n) || n < 10) throw new Error(`BENCH_SCALE_N must be a whole number of at least 10 (got "${process.env.BENCH_SCALE_N}")`);
  const keepDir = process.env.BENCH_SCALE_DIR || undefined;
  if (process.env.BENCH_PART === 'rebuild') {
    if (!keepDir) throw new Error('BENCH_PART=rebuild rebuilds the data dir BENCH_SCALE_DIR names (one a run with BENCH_SCALE_DIR kept)');
    return { name: `scale, the rebuild of ${keepDir}`, lines: await measureRebuildOnly(keepDir) };
  }
  const server = fileURLToPath(new URL('../api/server.js', import.meta.url));
  if (process.env.BENCH_PART === 'erase') {
    if (!keepDir) throw new Error('BENCH_PART=erase erases constituents of the data dir BENCH_SCALE_DIR names (a copy: an erasure cannot be undone)');
    return { name: `scale, erasures on ${keepDir}`, lines: await measureErase(server, keepDir) };
  }
  if (process.env.BENCH_PART === 'prepare') {
    if (!keepDir) throw new Error('BENCH_PART=prepare upgrades the data dir BENCH_SCALE_DIR names (a copy: the next release takes it over)');
    return { name: `scale, an upgrade of ${keepDir} with rebuild --prepare`, lines: await measurePrepare(server, keepDir) };
  }
  if (process.env.BENCH_PART === 'start') {
    if (!keepDir) throw new Error('BENCH_PART=start starts on the data dir BENCH_SCALE_DIR names (one a run with BENCH_SCALE_DIR kept)');
    return { name: `scale, a start on ${keepDir}`, lines: await measureStartOnly(server, keepDir) };
  }
  return { name: `scale, ${n.toLocaleString('en-US')} constituents`, lines: await measureScale({ n, server, keepDir }) };
}

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rebuildReadModels } from '../runtime/rebuild.js';
import { type BenchRequest, load, type Measure } from './lib.js';
import { nameTerms, person, random } from './names.js';
import { memory, type ServerProcess, startServer, until200 } from './scale-server.js';

/**
 * Issue 13's targets at scale: N constituents and N/10 updates written through the real server's
 * HTTP API, then a restart (SIGTERM, start again) and each figure beside its target.
 * `npm run bench -- scale`; BENCH_SCALE_N sets N (default 1,000,000).
 */

const ADMIN = 'bench-admin-token';
const WRITE_CONNECTIONS = 64;

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
 * The rebuild of every read model from the log (issue 13 point 4), offline on the data dir the
 * server just left, through the entry point `turnout rebuild` uses (runtime/read-models.ts).
 */
async function measureRebuild(dataDir: string): Promise<Figure> {
  const target = '>= 50,000 events/s';
  const { events, ms } = await rebuildReadModels(dataDir);
  const rate = events / (ms / 1000);
  return { figure: 'rebuild of every read model from the log', value: `${fmt(rate)} events/s (${fmt(events)} events in ${(ms / 1000).toFixed(1)} s)`, target, met: rate >= 50_000 };
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
    const templates = 500;
    note(`creating ${fmt(n)} constituents through POST /api/v1/constituents (${WRITE_CONNECTIONS} connections)`);
    const created = await load({
      origin,
      connections: WRITE_CONNECTIONS,
      warmupMs: 0,
      durationMs: 0,
      total: n,
      requests: Array.from({ length: templates }, (_, i) => ({ method: 'POST', path: '/api/v1/constituents', headers: json, body: JSON.stringify(person(i, '{{n}}')) })),
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

    // ---- the start ----
    note('restarting');
    current = await startServer(server, dir, ADMIN);
    const started = current;
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
        return { method: 'GET', path: `/api/v1/constituents?email=${encodeURIComponent(String(person(i % templates, String(i)).Email1))}`, headers: auth };
      }),
    );
    const byId = await sequential(
      started.origin,
      Array.from({ length: lookups }, () => ({ method: 'GET', path: `/api/v1/constituents/${probe + 1 + Math.floor(rnd() * n)}`, headers: auth })),
    );
    const afterSearches = memory(started.child.pid!);
    const progress = started.output().split('\n').filter((l) => /catching up|caught up/.test(l));
    await started.stop();
    current = null;

    const searched = 1 + searches3 + searches12;
    const peak = Math.max(atReady?.peakMb ?? NaN, afterSearches?.peakMb ?? NaN);
    const figures: Figure[] = [
      { figure: 'start to /healthz 200', value: msText(healthMs), target: '<= 1 s', met: healthMs <= 1000 },
      { figure: 'start to /readyz 200', value: msText(readyMs), target: '<= 2 s', met: readyMs <= 2000 },
      { figure: 'peak RSS during start (VmHWM at ready)', value: `${fmt(atReady?.peakMb ?? NaN)} MB`, target: '<= 400 MB', met: (atReady?.peakMb ?? Infinity) <= 400 },
      { figure: `peak RSS after ${searched} searches (VmHWM; VmRSS ${fmt(afterSearches?.nowMb ?? NaN)} MB)`, value: `${fmt(peak)} MB`, target: '<= 400 MB', met: peak <= 400 },
      { figure: 'first search after start', value: msText(firstSearchMs), target: '<= 100 ms', met: firstSearchMs <= 100 },
      { figure: `search, 3 characters from names, p99 (${searches3})`, value: msText(three.p99), target: '< 20 ms', met: three.p99 < 20 },
      { figure: `search, 1-2 characters, p99 (${searches12})`, value: msText(short.p99), target: '< 300 ms', met: short.p99 < 300 },
      { figure: `email look-up, p99 (${lookups})`, value: msText(emails.p99), target: '< 10 ms', met: emails.p99 < 10 },
      { figure: `read by id, p99 (${lookups})`, value: msText(byId.p99), target: '< 10 ms', met: byId.p99 < 10 },
      await measureRebuild(dir),
    ];
    const width = Math.max(...figures.map((f) => f.figure.length));
    const valueWidth = Math.max(...figures.map((f) => f.value.length));
    lines.push(`  ${'figure'.padEnd(width)}  ${'value'.padEnd(valueWidth)}  ${'target'.padEnd(18)}  verdict`);
    for (const f of figures) lines.push(`  ${f.figure.padEnd(width)}  ${f.value.padEnd(valueWidth)}  ${f.target.padEnd(18)}  ${f.met === null ? '-' : f.met ? 'met' : 'MISSED'}`);
    lines.push(`  baseline: GET /healthz, one at a time, p50 ${msText(healthz.p50)} p99 ${msText(healthz.p99)}; searches of 3 characters p50 ${msText(three.p50)}, of 1-2 p50 ${msText(short.p50)}`);
    for (const f of figures) if (f.note) lines.push(`  ${f.note}`);
    lines.push(`  /readyz while catching up: ${catchingUp ?? '(never seen: ready at the first answer)'}`);
    for (const l of progress) lines.push(`  server: ${l.trim()}`);
    return lines;
  } finally {
    await current?.stop();
    if (!options.keepDir) rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const n = Number(process.env.BENCH_SCALE_N ?? 1_000_000);
  if (!Number.isInteger(n) || n < 10) throw new Error(`BENCH_SCALE_N must be a whole number of at least 10 (got "${process.env.BENCH_SCALE_N}")`);
  const server = fileURLToPath(new URL('../api/server.js', import.meta.url));
  return { name: `scale, ${n.toLocaleString('en-US')} constituents`, lines: await measureScale({ n, server, keepDir: process.env.BENCH_SCALE_DIR || undefined }) };
}

import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { percentile } from './lib.js';
import { random } from './names.js';
import { startServer, until200 } from './scale-server.js';

/**
 * Issue 31's erasure at scale (BENCH_PART=erase on BENCH_SCALE_DIR): the server started on the
 * data dir with a probe of its main thread (loop-probe.ts), reads of /healthz and of other
 * records by id one at a time for a while without an erasure, then the same reads while
 * constituents are erased one after another. Prints each erasure's wall time, the main thread's
 * longest hold during the erasures and the reads' p99 in both windows. An erasure cannot be undone:
 * each run erases other ids of the dir (BENCH_ERASE_COUNT, 3 by default), picked at random
 * among those still readable. BENCH_CPU_PROF=<dir> writes the server's CPU profile there.
 */

const ADMIN = 'bench-admin-token';
const BASELINE_MS = 8_000;

const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;

interface Reads {
  healthz: number[];
  byId: number[];
  /** Answers other than 200, by status (a 404 is an id an earlier run erased). */
  other: Map<number, number>;
}

/** /healthz and a read by id, each in its own loop one request at a time, until `stop()`. */
function reader(origin: string, auth: Record<string, string>, ids: () => number): { stop(): Promise<Reads> } {
  const out: Reads = { healthz: [], byId: [], other: new Map() };
  let running = true;
  const loop = async (into: number[], path: () => string, headers: Record<string, string>) => {
    while (running) {
      const t0 = performance.now();
      const r = await fetch(origin + path(), { headers });
      await r.arrayBuffer();
      if (r.status !== 200) out.other.set(r.status, (out.other.get(r.status) ?? 0) + 1);
      into.push(performance.now() - t0);
    }
  };
  const loops = [loop(out.healthz, () => '/healthz', {}), loop(out.byId, () => `/api/v1/constituents/${ids()}`, auth)];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return out;
    },
  };
}

const p99 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 0.99);
const readLine = (label: string, r: Reads) =>
  `  ${label}: GET /healthz p99 ${ms(p99(r.healthz))} (max ${ms(Math.max(...r.healthz))}, ${r.healthz.length} reads); GET /api/v1/constituents/:id p99 ${ms(p99(r.byId))} (max ${ms(Math.max(...r.byId))}, ${r.byId.length} reads)${r.other.size ? `; not 200: ${[...r.other].map(([status, n]) => `${n} x ${status}`).join(', ')}` : ''}`;

/** The main thread's holds the probe wrote, as [ended at (epoch ms), held ms]. */
function holds(output: string): Array<[number, number]> {
  return [...output.matchAll(/^loop-probe: held ([\d.]+) ms until (\d+)/gm)].map((m) => [Number(m[2]), Number(m[1])]);
}

export async function measureErase(server: string, dir: string): Promise<string[]> {
  const count = Number(process.env.BENCH_ERASE_COUNT ?? 3);
  const probe = fileURLToPath(new URL('./loop-probe.js', import.meta.url));
  const profDir = process.env.BENCH_CPU_PROF;
  const started = await startServer(server, dir, ADMIN, ['--import', probe, ...(profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])]);
  try {
    await until200(started, '/readyz');
    const { origin } = started;
    const admin = { authorization: `Bearer ${ADMIN}` };
    const call = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
      const r = await fetch(origin + url, { method, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return { status: r.status, json: (await r.json()) as Record<string, any> };
    };
    const team = (await call('GET', '/admin/v1/teams', admin)).json.teams[0].id as number;
    const key = (await call('POST', `/admin/v1/teams/${team}/api-keys`, admin, { name: 'Scale erase', scope: 'read_write' })).json.key as string;
    const auth = { authorization: `Bearer ${key}` };
    const first = (await call('GET', '/api/v1/constituents?pageSize=1', auth)).json.constituents[0].PkConstituent as number;
    const n = Number(process.env.BENCH_SCALE_N ?? 1_000_000);
    const rnd = random(Date.now() % 100_000);
    const anyId = () => first + Math.floor(rnd() * n);
    const targets: number[] = [];
    while (targets.length < count) {
      const id = anyId();
      if (!targets.includes(id) && (await call('GET', `/api/v1/constituents/${id}`, auth)).status === 200) targets.push(id);
    }
    // Warm the read paths so the baseline is not the first reads'.
    await reader(origin, auth, anyId).stop();
    const quietFrom = Date.now();
    const quiet = reader(origin, auth, anyId);
    await new Promise((resolve) => setTimeout(resolve, BASELINE_MS));
    const baseline = await quiet.stop();
    const quietTo = Date.now();
    const walls: number[] = [];
    const during = reader(origin, auth, () => {
      for (;;) {
        const id = anyId();
        if (!targets.includes(id)) return id;
      }
    });
    const from = Date.now();
    for (const id of targets) {
      const t0 = performance.now();
      const r = await call('POST', `/admin/v1/teams/${team}/constituents/${id}/erase`, admin, { reason: 'bench' });
      if (r.status !== 200) throw new Error(`erasing ${id}: ${r.status} ${JSON.stringify(r.json)}`);
      walls.push(performance.now() - t0);
    }
    const to = Date.now();
    const reads = await during.stop();
    const within = (a: number, b: number) => holds(started.output()).filter(([at, h]) => at >= a && at - h <= b);
    const held = within(from, to);
    const longest = Math.max(0, ...held.map(([, h]) => h));
    // On a loaded machine the thread also waits for a core: the same probe without an erasure.
    const quietHeld = within(quietFrom, quietTo);
    return [
      `  ${count} erasures one after another on ${dir} (team ${team}, ids ${targets.join(', ')}): wall ${walls.map((w) => `${(w / 1000).toFixed(2)} s`).join(', ')}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
      `  the main thread's longest hold during them: ${ms(longest)} (target <= ~100 ms: ${longest <= 100 ? 'met' : 'MISSED'}); holds over 20 ms: ${held.length}, over 100 ms: ${held.filter(([, h]) => h > 100).length}`,
      `  the same probe without an erasure (${BASELINE_MS / 1000} s of reads): longest hold ${ms(Math.max(0, ...quietHeld.map(([, h]) => h)))}; holds over 20 ms: ${quietHeld.length}, over 100 ms: ${quietHeld.filter(([, h]) => h > 100).length}`,
      readLine(`reads without an erasure (${BASELINE_MS / 1000} s)`, baseline),
      readLine('the same reads during the erasures', reads),
    ];
  } finally {
    await started.stop();
  }
}

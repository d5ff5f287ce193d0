import { spawn } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { percentile } from './lib.js';
import { person } from './names.js';
import { type ServerProcess, startServer, until200 } from './scale-server.js';

/**
 * Issue 32's upgrade at scale (BENCH_PART=prepare on BENCH_SCALE_DIR, a copy: the switch leaves
 * the data dir to the next release): this build's server serves the data dir while the next
 * release, this build with the constituents read model one version up (as a release that changed
 * what that read model holds), runs `turnout rebuild --prepare` on it (decisions.md §13). Meanwhile
 * reads by id and creations run against the old server, one at a time each. Then the old server
 * stops and the next release starts on the data dir, timed from its spawn to /readyz 200, and
 * counts the constituents. Prints the prepare's own output (progress and its `prepared` line).
 */

const ADMIN = 'bench-admin-token';
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const p99 = (xs: number[]) => (xs.length ? percentile([...xs].sort((a, b) => a - b), 0.99) : NaN);

/** The next release: a copy of this build beside it whose constituents projector is one version up. */
function nextRelease(server: string): { server: string; cli: string; remove(): void } {
  const build = path.dirname(path.dirname(server));
  const dir = `${build}-next-bench`;
  rmSync(dir, { recursive: true, force: true });
  cpSync(build, dir, { recursive: true });
  const file = path.join(dir, 'projections/constituents.js');
  const source = readFileSync(file, 'utf8');
  const raised = source.replace(/(constituentsProjection = recordProjection\(\{[^]*?\bversion: )(\d+),/, (_m, head: string, v: string) => `${head}${Number(v) + 1},`);
  if (raised === source) throw new Error(`the constituents projector names no version in ${file}`);
  writeFileSync(file, raised);
  return { server: path.join(dir, 'api/server.js'), cli: path.join(dir, 'cli/main.js'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Traffic {
  reads: number[];
  writes: number[];
  /** Answers other than 2xx, by status. */
  failed: Map<number, number>;
}

/** A read by id and a creation, each in its own loop one request at a time, until `stop()`. */
function traffic(s: ServerProcess, key: string, maxId: number): { stop(): Promise<Traffic> } {
  const out: Traffic = { reads: [], writes: [], failed: new Map() };
  const auth = { authorization: `Bearer ${key}` };
  let running = true;
  let n = 0;
  const loop = async (into: number[], send: () => Promise<Response>) => {
    while (running) {
      const t0 = performance.now();
      const r = await send();
      await r.arrayBuffer();
      if (r.status >= 300) out.failed.set(r.status, (out.failed.get(r.status) ?? 0) + 1);
      into.push(performance.now() - t0);
    }
  };
  const loops = [
    loop(out.reads, () => fetch(`${s.origin}/api/v1/constituents/${1 + Math.floor(Math.random() * maxId)}`, { headers: auth })),
    loop(out.writes, () =>
      fetch(`${s.origin}/api/v1/constituents`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(person(n, `prep${n++}`)) }),
    ),
  ];
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return out;
    },
  };
}

/** Runs the next release's `turnout rebuild --prepare`; its output, line by line, and its wall time. */
function prepare(cli: string, dir: string): Promise<{ code: number | null; lines: string[]; seconds: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, 'rebuild', '--prepare'], { env: { PATH: process.env.PATH, TURNOUT_DATA_DIR: dir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, lines: out.split('\n').filter(Boolean), seconds: (performance.now() - t0) / 1000 })),
  );
}

export async function measurePrepare(server: string, dir: string): Promise<string[]> {
  const next = nextRelease(server);
  const lines: string[] = [];
  let old: ServerProcess | null = null;
  let fresh: ServerProcess | null = null;
  try {
    old = await startServer(server, dir, ADMIN);
    await until200(old, '/readyz');
    const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
    const teams = (await (await fetch(`${old.origin}/admin/v1/teams`, { headers: admin })).json()) as { teams: Array<{ id: number }> };
    const team = teams.teams[0].id;
    const made = await fetch(`${old.origin}/admin/v1/teams/${team}/api-keys`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'Scale prepare', scope: 'read_write' }) });
    const key = ((await made.json()) as { key: string }).key;
    const count = async (s: ServerProcess) =>
      ((await (await fetch(`${s.origin}/api/v1/constituents?pageSize=1`, { headers: { authorization: `Bearer ${key}` } })).json()) as { total: number }).total;
    const before = await count(old);

    const load0 = loadavg()[0];
    const running = traffic(old, key, before);
    const prepared = await prepare(next.cli, dir);
    const served = await running.stop();
    const load1 = loadavg()[0];
    const afterPrepare = await count(old);
    await old.stop();
    old = null;

    lines.push(
      `the next release's \`turnout rebuild --prepare\` on ${before.toLocaleString('en-US')} constituents, beside this build's server (load average ${load0.toFixed(1)} before, ${load1.toFixed(1)} after): exit ${prepared.code}, ${prepared.seconds.toFixed(1)} s; its output:`,
      ...prepared.lines.map((l) => `    ${l}`),
      `  the old server meanwhile, one request at a time each: ${served.reads.length} reads by id, p99 ${ms(p99(served.reads))} (max ${ms(Math.max(...served.reads))}); ${served.writes.length} creations, p99 ${ms(p99(served.writes))}; ${served.failed.size ? `not 2xx: ${[...served.failed].map(([status, n]) => `${n} x ${status}`).join(', ')}` : 'every answer 2xx'}`,
    );

    fresh = await startServer(next.server, dir, ADMIN);
    const readyMs = await until200(fresh, '/readyz');
    const found = await count(fresh);
    lines.push(
      `  the next release on the data dir: /readyz 200 ${ms(readyMs)} after its spawn (target: within 3 s); it finds ${found.toLocaleString('en-US')} constituents, the old server had ${afterPrepare.toLocaleString('en-US')} (${found === afterPrepare ? 'every one' : 'MISSING SOME'})`,
    );
    return lines;
  } finally {
    await old?.stop();
    await fresh?.stop();
    next.remove();
  }
}

import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { waitUntil } from '../support/nats.js';
import { http, spawnTurnout, type TurnoutProcess, useBuiltService } from '../support/process.js';

/**
 * Issue 32's "done when" for `turnout rebuild --prepare` (decisions.md §13): two releases, the
 * second raising the constituents read model's version; the second prepares while the first
 * serves reads and writes, then takes over the data dir and finds every record.
 */
const service = useBuiltService('turnout-cli-prepare-');
const removals: Array<() => void> = [];
const running: TurnoutProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  removals.forEach((r) => r());
});

/**
 * The next release: a copy of the build whose constituents projector is one version up, as a
 * release that changed what that read model holds would be. Beside the build (under
 * node_modules/.cache), so it resolves the same packages.
 */
function nextRelease(): { server: string; cli: string } {
  const build = path.dirname(path.dirname(service.built('api/server.js')));
  const dir = `${build}-next-${process.pid}-${Date.now()}`;
  cpSync(build, dir, { recursive: true });
  removals.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'projections/constituents.js');
  const source = readFileSync(file, 'utf8');
  const raised = source.replace(/(constituentsProjection = recordProjection\(\{[^]*?\bversion: )(\d+),/, (_m, head: string, v: string) => `${head}${Number(v) + 1},`);
  expect(raised, 'the constituents projector names its version in its definition').not.toBe(source);
  writeFileSync(file, raised);
  return { server: path.join(dir, 'api/server.js'), cli: path.join(dir, 'cli/main.js') };
}

/**
 * Starts a release's server and times its start from its spawn: to its routes serving (the
 * "listening" line) and to /readyz 200; and reads the process's own account of it (its "ready"
 * line: time since the process started, and the CPU that took).
 */
async function startTimed(server: string, env: Record<string, string>) {
  const spawned = performance.now();
  const proc = await spawnTurnout({ server, remove: () => undefined }, { env, ready: false });
  running.push(proc);
  let listening: number | null = null;
  for (;;) {
    if (listening === null && proc.output().includes('listening on')) listening = performance.now();
    if (listening !== null && (await fetch(`${proc.url}/readyz`)).ok) break;
    if (performance.now() - spawned > 60_000) throw new Error(`not ready within 60 s:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const ready = performance.now();
  const readyAfterListeningMs = ready - listening;
  // Printed as /readyz turns 200; its pipe may deliver it a moment after the answer.
  const line = /^ready (\d+) ms after the process started \(CPU (\d+) ms\)$/m;
  await waitUntil('the ready line', async () => line.test(proc.output()), 10_000);
  const [, selfMs, cpuMs] = line.exec(proc.output())!.map(Number);
  return Object.assign(proc, {
    readyAfterListeningMs,
    selfMs,
    cpuMs,
    timing: `routes serving ${(listening - spawned).toFixed(0)} ms after its spawn, /readyz 200 ${(ready - spawned).toFixed(0)} ms after it (${readyAfterListeningMs.toFixed(0)} ms after the routes); by its own account ready ${selfMs} ms after the process started, CPU ${cpuMs} ms`,
  });
}

const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))];

describe('an upgrade without downtime: turnout rebuild --prepare, then the switch', () => {
  it('prepares with the new release while the old one serves reads and writes, and the new one starts ready at once and finds every record', async () => {
    const next = nextRelease();
    const dir = service.freshDir();
    // The load below runs far above a key's default rate limit.
    const env = { TURNOUT_DATA_DIR: dir, TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' };
    const old = await service.start({ env });
    const admin = http(`${old.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Upgraded' })).body.team.id as number;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Check', scope: 'read_write' })).body.key as string;
    const api = http(`${old.url}/api/v1`, key);
    const batch = await api.post('/constituents/batch', { items: Array.from({ length: 200 }, (_, i) => ({ LastName: `Before${i}`, Email1: `before${i}@example.org` })) });
    expect(batch.status).toBe(200);
    const records = new Map<number, string>(batch.body.results.map((item: { constituent: { PkConstituent: number; LastName: string } }) => [item.constituent.PkConstituent, item.constituent.LastName]));

    // Reads and writes on the old release all through the prepare.
    const failures: string[] = [];
    const readMs: number[] = [];
    let serving = true;
    const ids = [...records.keys()];
    const load = (async () => {
      for (let i = 0; serving; i++) {
        const id = ids[(i * 37) % ids.length];
        const started = performance.now();
        const read = await api.get(`/constituents/${id}`);
        readMs.push(performance.now() - started);
        if (read.status !== 200) failures.push(`GET ${id}: ${read.status}`);
        if (i % 3 === 0) {
          const created = await api.post('/constituents', { LastName: `During${i}` });
          if (created.status !== 201) failures.push(`POST: ${created.status}`);
          else records.set(created.body.constituent.PkConstituent, `During${i}`);
        }
      }
    })();
    await waitUntil('the load has begun', async () => readMs.length > 5, 10_000);
    const prepare = startCli(next.cli, ['rebuild', '--prepare', '--data-dir', dir]);
    const code = await prepare.exited;
    const writtenDuring = [...records.values()].filter((n) => n.startsWith('During')).length;
    serving = false;
    await load;

    expect(code, prepare.stderr()).toBe(0);
    const line = prepare.stdout().trim();
    expect(line).toContain('prepared');
    expect(JSON.parse(line).prepared).toMatchObject({ dataDir: path.resolve(dir), readModels: ['constituents'], resumed: false });
    expect(prepare.stderr()).toMatch(/^prepare: (\d+)\/\1 \(\d+\/s, ETA 0 s\)$/m);
    expect(prepare.stderr()).not.toMatch(/[\r\x1b]/);
    expect(failures).toEqual([]);
    expect(writtenDuring).toBeGreaterThan(0);
    // decisions.md §13: the old release serves as before. Bounded generously: the machine is shared.
    const readP99 = p99(readMs);
    console.log(`reads on the old release during the prepare: ${readMs.length}, p99 ${readP99.toFixed(1)} ms; ${writtenDuring} records written meanwhile`);
    expect(readP99).toBeLessThan(1_000);

    // Written after the prepare caught up: the new release applies these at its start.
    for (let i = 0; i < 5; i++) records.set((await api.post('/constituents', { LastName: `After${i}` })).body.constituent.PkConstituent, `After${i}`);
    await old.stop();

    const upgraded = await startTimed(next.server, env);
    console.log(`the new release after the prepare: ${upgraded.timing}`);
    // decisions.md §13: ready within 3 s of the start. The wall time is the promise, but on a
    // shared machine under load a start waits for the cores, so it is bounded loosely here; the
    // start's own CPU, every thread's, does not wait, and is held to the 3 s.
    expect(upgraded.readyAfterListeningMs).toBeLessThan(3_000);
    expect(upgraded.selfMs).toBeLessThan(30_000);
    expect(upgraded.cpuMs).toBeLessThan(3_000);
    expect(upgraded.output()).toMatch(/read models: adopted readmodels\.prepared-[0-9a-f]{16}\.sqlite, prepared for this release \(built: constituents\)/);
    expect(upgraded.output()).not.toContain('to build from the log');

    const reader = http(`${upgraded.url}/api/v1`, key);
    const missing: string[] = [];
    for (const [id, name] of records) {
      const r = await reader.get(`/constituents/${id}`);
      if (r.status !== 200 || r.body.constituent.LastName !== name) missing.push(`${id} ${name}: ${r.status}`);
    }
    expect(missing).toEqual([]);
    expect((await reader.get('/constituents?pageSize=1')).body.total).toBe(records.size);
    await upgraded.stop();
    const db = new Database(path.join(dir, 'readmodels.sqlite'), { readonly: true });
    const version = db.prepare(`SELECT version FROM _meta_versions WHERE name = 'projector:constituents'`).pluck().get() as number;
    db.close();
    const oldVersion = Number(/constituentsProjection = recordProjection\(\{[^]*?\bversion: (\d+),/.exec(readFileSync(service.built('projections/constituents.js'), 'utf8'))![1]);
    expect(version).toBe(oldVersion + 1);
  }, 180_000);
});

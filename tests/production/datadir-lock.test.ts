import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Build, buildService, spawnTurnout, type TurnoutProcess } from '../support/process.js';

/**
 * Without NATS a data dir belongs to one process: two on one dir would both dispatch every
 * webhook (issue 12). Real processes, since the lock is the operating system's. With NATS several
 * share it: tests/production/multiprocess.test.ts keeps that working.
 */
let build: Build;
const dirs: string[] = [];
const running: TurnoutProcess[] = [];

beforeAll(async () => {
  build = await buildService();
}, 180_000);

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  build?.remove();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir() {
  const d = mkdtempSync(path.join(tmpdir(), 'turnout-lock-'));
  dirs.push(d);
  return { TURNOUT_DATA_DIR: d };
}

async function start(env: Record<string, string>) {
  const p = await spawnTurnout(build, { env });
  running.push(p);
  return p;
}

describe('a second process on an embedded data dir', () => {
  it('refuses to start, exits non-zero and names the process holding the dir; the holder keeps serving', async () => {
    const env = freshDir();
    const first = await start(env);
    const refused = await start(env).then(
      () => null,
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/exited \(1\)/);
    expect(refused).toContain(`in use by another Turnout process (pid ${first.process.pid})`);
    expect((await fetch(`${first.url}/readyz`)).ok).toBe(true);
  }, 90_000);

  it('starts once the holder has been killed, since the lock dies with its process', async () => {
    const env = freshDir();
    const first = await start(env);
    first.process.kill('SIGKILL');
    await new Promise((r) => first.process.once('exit', r));
    const second = await start(env);
    expect((await fetch(`${second.url}/readyz`)).ok).toBe(true);
  }, 90_000);
});

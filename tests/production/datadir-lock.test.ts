import { describe, expect, it } from 'vitest';
import { useBuiltService } from '../support/process.js';

/**
 * Without NATS a data dir belongs to one process: two on one dir would both dispatch every
 * webhook (issue 12). Real processes, since the lock is the operating system's. With NATS several
 * share it: tests/production/multiprocess.test.ts keeps that working.
 */
const service = useBuiltService('turnout-lock-');

function freshDir() {
  return { TURNOUT_DATA_DIR: service.freshDir() };
}

const start = (env: Record<string, string>) => service.start({ env });

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

import { Worker } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { ProjectorThread } from '../../projections/engine/thread.js';

/**
 * A projector thread that tells `ready` and dies at once: its uncaught error may reach the main
 * thread before its `ready` (about a third of the time here, measured), but never after its exit.
 * Its start must not depend on that order: it was ready, so it is restarted like any thread that
 * dies, not taken for a first thread that never started (which rejects the start).
 */
it('a first thread that was ready and died at once starts, and is restarted, whichever of its error and its ready arrives first', async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    parentPort.postMessage({ type: 'ready', position: '0', head: '0', rebuilt: [] });
    setImmediate(() => { throw new Error('died on its first event'); });`;
  for (let i = 0; i < 24; i++) {
    const reports: string[] = [];
    let spawned = 0;
    const spawn = () => {
      spawned++;
      return new Worker(code, { eval: true });
    };
    const thread = await ProjectorThread.start(spawn, async () => 0, { report: (m) => reports.push(m), restart: { initialMs: 60_000, maxMs: 60_000 } });
    await expect.poll(() => reports.length).toBeGreaterThan(0);
    expect(reports[0]).toMatch(/^the read-model projector thread stopped: died on its first event; restarting it in \d+ ms$/);
    expect(spawned).toBe(1);
    await thread.stop();
  }
});

it('a first thread that dies before it is ready rejects the start with its error', async () => {
  const spawn = () => new Worker(`throw new Error('cannot open the read database')`, { eval: true });
  await expect(ProjectorThread.start(spawn, async () => 0)).rejects.toThrow('cannot open the read database');
});

import { Worker } from 'node:worker_threads';
import { expect, it } from 'vitest';
import { ThreadCalls } from '../../eventlog/thread-calls.js';

const options = (told: Array<{ message: string; wasReady: boolean }>) => ({
  answer: (m: Record<string, unknown>) => m,
  failed: (reason: string) => new Error(reason),
  stopped: (err: Error) => new Error(`stopped: ${err.message}`),
  onStop: (err: Error, wasReady: boolean) => told.push({ message: err.message, wasReady }),
});

/**
 * A thread that says ready and dies at once: its uncaught error may reach the main thread before
 * its ready, never after its exit. It was ready, so its calls' owner must be told so (the sealing
 * and idempotency threads are then started again, not given up for the process's life).
 */
it('a thread that was ready and died at once is told as ready, whichever of its error and its ready arrives first', async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    parentPort.postMessage({ ready: true });
    setImmediate(() => { throw new Error('died at once'); });`;
  for (let i = 0; i < 24; i++) {
    const told: Array<{ message: string; wasReady: boolean }> = [];
    const calls = new ThreadCalls(new Worker(code, { eval: true }), options(told));
    await expect.poll(() => told.length).toBe(1);
    expect(told[0]).toEqual({ message: 'died at once', wasReady: true });
    await expect(calls.call({ any: 1 })).rejects.toThrow('died at once');
  }
});

it('a thread that dies before it is ready is told as not ready, with its error', async () => {
  const told: Array<{ message: string; wasReady: boolean }> = [];
  new ThreadCalls(new Worker(`throw new Error('cannot open the file')`, { eval: true }), options(told));
  await expect.poll(() => told.length).toBe(1);
  expect(told[0]).toEqual({ message: 'cannot open the file', wasReady: false });
});

it('a call in flight when the thread dies fails with the thread\'s error, once it has exited', async () => {
  const code = `
    const { parentPort } = require('node:worker_threads');
    parentPort.postMessage({ ready: true });
    parentPort.on('message', () => { throw new Error('broke on the call'); });`;
  const told: Array<{ message: string; wasReady: boolean }> = [];
  const calls = new ThreadCalls(new Worker(code, { eval: true }), options(told));
  await expect.poll(() => calls.ready).toBe(true);
  await expect(calls.call({ x: 1 })).rejects.toThrow('stopped: broke on the call');
  expect(told).toEqual([{ message: 'broke on the call', wasReady: true }]);
  expect(calls.failure?.message).toBe('broke on the call');
});

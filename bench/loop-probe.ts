/*
 * Loaded into the server's process by the erasure bench (`node --import`): a timer every 5 ms on
 * the main thread. A tick that comes late says the thread was held that long (by a synchronous
 * piece of work); each hold over 20 ms is written to stderr with the wall-clock time it ended, so
 * the bench can tell which fell inside the erasure, and the monotonic clock's microseconds (those
 * of a `--cpu-prof` profile's samples), to find what held it.
 */
import { isMainThread } from 'node:worker_threads';

const EVERY_MS = 5;
const REPORT_OVER_MS = 20;

if (isMainThread) {
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const held = now - last - EVERY_MS;
    last = now;
    if (held > REPORT_OVER_MS) process.stderr.write(`loop-probe: held ${held.toFixed(1)} ms until ${Date.now()} (monotonic ${process.hrtime.bigint() / 1000n} µs)\n`);
  }, EVERY_MS).unref();
}

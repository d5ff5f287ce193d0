// @ts-check
/*
 * The sealing thread's program (eventlog/seal-thread.js) that dies, as a thread can (out of
 * memory, a native fault), at the first turn that seals anything for `constituent-13`: for the
 * tests of what the sealing layer does when its thread stops under a turn.
 */
import { parentPort } from 'node:worker_threads';

// Registered before the program's own listener, so it runs first.
parentPort?.on('message', (/** @type {{ seals?: string }} */ m) => {
  if (typeof m.seals === 'string' && m.seals.split('\0').includes('constituent-13')) process.exit(3);
});
await import('../../eventlog/seal-thread.js');

// @ts-check
/*
 * The sealing layer's thread (sealed-turn.ts): the AES-256-GCM seals of one turn's appends,
 * handed over in one message and answered in one, so that the main thread, which serves the
 * API, keeps only the values' JSON and the split (decisions.md §17 unchanged: a key per
 * constituent, a fresh 96-bit nonce per seal). Plain JavaScript, typed by JSDoc and checked by
 * tsc, as the key store's thread is (keys-thread.js), so that it runs from the sources under the
 * test runner and, copied by tsc, from the build.
 *
 * Each seal is sealed-format.js's, as the main thread's Sealer (sealing.ts) makes it, the stream
 * and part bound as associated data (`<stream>:<part>`); the nonces come from this thread's own
 * pool (a module's state is its thread's).
 */
import { parentPort } from 'node:worker_threads';
import { sealText } from './sealed-format.js';
import { serveCalls } from './thread-serve.js';

if (!parentPort) throw new Error('seal-thread.js runs as a worker thread of the sealing layer');
const port = parentPort;

/**
 * One turn: `seals`, triples (stream, part, the values' JSON), NUL between each, and `keys`, each
 * seal's data key in order, 32 bytes a seal (sent with the turn by postMessage, so in memory only,
 * never written anywhere, and zeroed once the turn is sealed: this thread holds no key between
 * turns, so an erasure has nothing to take from it). The answer holds the sealed texts in the same
 * order, a newline between each (neither is in a text).
 * @typedef {{ keys?: Uint8Array; seals?: string }} Turn
 */
// Turns go to the thread from now on; those before were sealed on the main thread.
serveCalls(port, (/** @type {Turn} */ m) => {
  const block = m.keys ?? new Uint8Array(0);
  try {
    const seals = m.seals ? m.seals.split('\0') : [];
    if (block.length !== (32 * seals.length) / 3) throw new Error(`the sealing thread got ${block.length / 32} keys for ${seals.length / 3} seals`);
    /** @type {string[]} */
    const texts = [];
    for (let i = 0, k = 0; i < seals.length; i += 3, k += 32) {
      texts.push(sealText(Buffer.from(block.buffer, block.byteOffset + k, 32), seals[i + 2], `${seals[i]}:${seals[i + 1]}`));
    }
    return { answer: { texts: texts.join('\n') } };
  } finally {
    block.fill(0);
  }
});

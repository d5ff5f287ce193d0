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

if (!parentPort) throw new Error('seal-thread.js runs as a worker thread of the sealing layer');
const port = parentPort;

/**
 * The data keys this thread holds, by stream: sent once each (by postMessage, so in memory only,
 * never written anywhere), dropped when the main thread says so (an erasure, or the main thread's
 * bound on what it has sent), and zeroed as they are dropped.
 * @type {Map<string, Buffer>}
 */
const keys = new Map();

/**
 * One turn: `drop` the keys to forget, `keyed` the streams whose keys come in `keys` (32 bytes
 * each, in order), then `seals`: triples (stream, part, the values' JSON), NUL between each; the
 * answer holds the sealed texts in the same order, a newline between each (neither is in a text).
 * @typedef {{ id: number; drop?: string[]; keyed?: string[]; keys?: Uint8Array; seals?: string; close?: true }} Turn
 */
port.on('message', (/** @type {Turn} */ m) => {
  if (m.drop) for (const stream of m.drop) forget(stream);
  if (m.close) {
    for (const stream of [...keys.keys()]) forget(stream);
    port.postMessage({ id: m.id, texts: '' });
    return;
  }
  if (m.keyed && m.keys) {
    const block = m.keys;
    m.keyed.forEach((stream, i) => {
      forget(stream);
      keys.set(stream, Buffer.from(block.buffer, block.byteOffset + i * 32, 32));
    });
  }
  // A message of keys to drop alone has no seals and gets no answer; a turn always has (maybe none).
  if (m.seals === undefined) return;
  try {
    const seals = m.seals ? m.seals.split('\0') : [];
    /** @type {string[]} */
    const texts = [];
    for (let i = 0; i < seals.length; i += 3) {
      const key = keys.get(seals[i]);
      if (!key) throw new Error(`the sealing thread holds no key for ${seals[i]}`);
      texts.push(sealText(key, seals[i + 2], `${seals[i]}:${seals[i + 1]}`));
    }
    port.postMessage({ id: m.id, texts: texts.join('\n') });
  } catch (err) {
    port.postMessage({ id: m.id, failed: err instanceof Error ? err.message : String(err) });
  }
});

/** @param {string} stream */
function forget(stream) {
  const key = keys.get(stream);
  if (!key) return;
  key.fill(0);
  keys.delete(stream);
}

// Turns go to the thread from now on; those before were sealed on the main thread.
port.postMessage({ ready: true });

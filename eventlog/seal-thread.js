// @ts-check
/*
 * The sealing layer's thread (sealed-turn.ts): the AES-256-GCM seals of one turn's appends,
 * handed over in one message and answered in one, so that the main thread, which serves the
 * API, keeps only the values' JSON and the split (decisions.md §17 unchanged: a key per
 * constituent, a fresh 96-bit nonce per seal). Plain JavaScript, typed by JSDoc and checked by
 * tsc, as the key store's thread is (keys-thread.js), so that it runs from the sources under the
 * test runner and, copied by tsc, from the build.
 *
 * Each seal's text is byte for byte what Sealer.sealText (sealing.ts) makes, and opens there:
 * `sealed:v1:` then base64url(version 1 | nonce | tag | ciphertext), the stream and part bound
 * as associated data (`<stream>:<part>`).
 */
import { createCipheriv, randomFillSync } from 'node:crypto';
import { parentPort } from 'node:worker_threads';

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
 * Nonces from a pool of this thread's own, filled 16 KiB at a time from OpenSSL's CSPRNG (as the
 * main thread's is, sealing.ts): each thread draws its own bytes from the generator and no pool
 * is shared or copied between threads, so no two seals, here or there, take the same bytes.
 */
const POOL_BYTES = 16 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** @param {Buffer} into */
function nonceInto(into) {
  if (used + into.length > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  pool.copy(into, 0, used, used + into.length);
  used += into.length;
}

const HEAD = 1 + 12 + 16;

/**
 * @param {Buffer} key
 * @param {string} plain
 * @param {string} associated
 */
function sealText(key, plain, associated) {
  const bytes = Buffer.from(plain, 'utf8');
  const out = Buffer.allocUnsafe(HEAD + bytes.length);
  out[0] = 1;
  nonceInto(out.subarray(1, 13));
  const cipher = createCipheriv('aes-256-gcm', key, out.subarray(1, 13));
  cipher.setAAD(Buffer.from(associated, 'utf8'));
  // GCM is a stream mode: update gives every byte, final none (it only computes the tag).
  const body = cipher.update(bytes);
  const rest = cipher.final();
  if (body.length + rest.length !== bytes.length) throw new Error('AES-GCM gave a ciphertext of another length than its plaintext');
  body.copy(out, HEAD);
  rest.copy(out, HEAD + body.length);
  cipher.getAuthTag().copy(out, 13);
  return 'sealed:v1:' + out.toString('base64url');
}

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

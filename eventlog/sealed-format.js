// @ts-check
/*
 * The one definition of a sealed value's bytes (decisions.md §17), for every thread that seals or
 * opens one: the main thread's Sealer (sealing.ts), the sealing thread (seal-thread.js) and the
 * key store's thread (keys-thread.js). Plain JavaScript, typed by JSDoc and checked by tsc, as
 * sqlite-wire.js is, so that a worker's entry file can import it without a TypeScript step.
 *
 * AES-256-GCM with a fresh 96-bit nonce per seal. The bytes: version 1 | nonce | tag | ciphertext.
 * The text form: `sealed:v1:` then those bytes in base64url. The version comes first so that a
 * later format (another cipher, a rotated main key) can be told apart from this one and from
 * plaintext written before sealing existed. The associated data binds a value to where it
 * belongs (an endpoint's id, a constituent's stream): a ciphertext copied elsewhere does not open.
 */
import { createCipheriv, createDecipheriv, randomFillSync } from 'node:crypto';

export const KEY_BYTES = 32;
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEAD = 1 + NONCE_BYTES + TAG_BYTES;
export const TEXT_PREFIX = 'sealed:v1:';

/**
 * Random bytes (nonces, data keys) from a pool filled 16 KiB at a time from OpenSSL's CSPRNG, as
 * Node's own randomUUID caches its entropy: one call into OpenSSL per few hundred seals rather than
 * one per seal, which cost as much as the encryption itself. A module's state is its thread's
 * own, so each thread draws its own bytes from the generator and no pool is shared or copied
 * between threads: no two seals, here or there, take the same nonce. The answer is a view of the
 * pool, valid until the next call: copy it.
 */
const POOL_BYTES = 16 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

/** @param {number} n */
export function randomBytes(n) {
  if (used + n > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const out = pool.subarray(used, used + n);
  used += n;
  return out;
}

/**
 * @param {import('node:crypto').CipherKey} key a 32-byte key, as bytes or a KeyObject
 * @param {Buffer} plain
 * @param {string} associated
 * @returns {Buffer}
 */
export function sealBytes(key, plain, associated) {
  const out = Buffer.allocUnsafe(HEAD + plain.length);
  out[0] = VERSION;
  const nonce = out.subarray(1, 1 + NONCE_BYTES);
  randomBytes(NONCE_BYTES).copy(nonce);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(associated, 'utf8'));
  // GCM is a stream mode: update gives every byte, final none (it only computes the tag).
  const body = cipher.update(plain);
  const rest = cipher.final();
  if (body.length + rest.length !== plain.length) throw new Error('AES-GCM gave a ciphertext of another length than its plaintext');
  body.copy(out, HEAD);
  rest.copy(out, HEAD + body.length);
  cipher.getAuthTag().copy(out, 1 + NONCE_BYTES);
  return out;
}

/**
 * Throws when the bytes were not sealed by this key for `associated`, or were altered.
 * @param {import('node:crypto').CipherKey} key
 * @param {Buffer} sealed
 * @param {string} associated
 * @returns {Buffer}
 */
export function openBytes(key, sealed, associated) {
  if (sealed.length < HEAD || sealed[0] !== VERSION) throw new Error('not a sealed value of a known format');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 1 + NONCE_BYTES));
  decipher.setAAD(Buffer.from(associated, 'utf8'));
  decipher.setAuthTag(sealed.subarray(1 + NONCE_BYTES, HEAD));
  const body = decipher.update(sealed.subarray(HEAD));
  const rest = decipher.final();
  return rest.length ? Buffer.concat([body, rest]) : body;
}

/**
 * @param {import('node:crypto').CipherKey} key
 * @param {string} plain
 * @param {string} associated
 */
export function sealText(key, plain, associated) {
  return TEXT_PREFIX + sealBytes(key, Buffer.from(plain, 'utf8'), associated).toString('base64url');
}

/**
 * @param {import('node:crypto').CipherKey} key
 * @param {string} sealed
 * @param {string} associated
 */
export function openText(key, sealed, associated) {
  if (!isSealedText(sealed)) throw new Error('not a sealed text');
  return openBytes(key, Buffer.from(sealed.slice(TEXT_PREFIX.length), 'base64url'), associated).toString('utf8');
}

/**
 * @param {unknown} value
 * @returns {value is string}
 */
export function isSealedText(value) {
  return typeof value === 'string' && value.startsWith(TEXT_PREFIX);
}

import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomFillSync } from 'node:crypto';

/**
 * Authenticated encryption for what must not lie in plaintext at rest (decisions.md §17): webhook
 * signing secrets under the main key, and each constituent's data key, itself wrapped by the main
 * key, for its personal fields. AES-256-GCM from node:crypto, a random 96-bit nonce per seal.
 *
 * A sealed value names its format version first, so a later format (another cipher, a rotated
 * main key) can be told apart from this one and from plaintext written before sealing existed.
 * The associated data binds a sealed value to where it belongs (for example an endpoint's id or a
 * constituent's stream): a ciphertext copied to another record does not open there.
 */
export class Sealer {
  static readonly KEY_BYTES = 32;
  private static readonly NONCE_BYTES = 12;
  private static readonly TAG_BYTES = 16;
  /** The text form's prefix: `sealed:v1:` then base64url(nonce | tag | ciphertext). */
  static readonly TEXT_PREFIX = 'sealed:v1:';
  private static readonly VERSION = 1;

  constructor(private readonly key: Buffer) {
    if (key.length !== Sealer.KEY_BYTES) throw new Error(`a sealing key is ${Sealer.KEY_BYTES} bytes (got ${key.length})`);
  }

  /** The key as a KeyObject, which a worker thread that seals under it receives (the key store's, keys-thread.js). */
  keyObject(): KeyObject {
    return createSecretKey(this.key);
  }

  /**
   * The key's bytes copied into `into` at `at`, for the sealing thread (sealed-turn.ts), which
   * keeps them in its memory only, as this object does.
   */
  copyKeyInto(into: Uint8Array, at: number): void {
    into.set(this.key, at);
  }

  /** A fresh random key, for example a constituent's data key. */
  static newKey(): Buffer {
    return Buffer.from(random(Sealer.KEY_BYTES));
  }

  /** version byte | nonce | tag | ciphertext. */
  sealBytes(plain: Buffer, associated = ''): Buffer {
    const head = 1 + Sealer.NONCE_BYTES + Sealer.TAG_BYTES;
    const out = Buffer.allocUnsafe(head + plain.length);
    out[0] = Sealer.VERSION;
    const nonce = out.subarray(1, 1 + Sealer.NONCE_BYTES);
    random(Sealer.NONCE_BYTES).copy(nonce);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(associated, 'utf8'));
    // GCM is a stream mode: update gives every byte, final none (it only computes the tag).
    const body = cipher.update(plain);
    const rest = cipher.final();
    if (body.length + rest.length !== plain.length) throw new Error('AES-GCM gave a ciphertext of another length than its plaintext');
    body.copy(out, head);
    rest.copy(out, head + body.length);
    cipher.getAuthTag().copy(out, 1 + Sealer.NONCE_BYTES);
    return out;
  }

  /** Throws when the bytes were not sealed by this key for `associated`, or were altered. */
  openBytes(sealed: Buffer, associated = ''): Buffer {
    const head = 1 + Sealer.NONCE_BYTES + Sealer.TAG_BYTES;
    if (sealed.length < head || sealed[0] !== Sealer.VERSION) throw new Error('not a sealed value of a known format');
    const nonce = sealed.subarray(1, 1 + Sealer.NONCE_BYTES);
    const tag = sealed.subarray(1 + Sealer.NONCE_BYTES, head);
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
    decipher.setAAD(Buffer.from(associated, 'utf8'));
    decipher.setAuthTag(tag);
    const body = decipher.update(sealed.subarray(head));
    const rest = decipher.final();
    return rest.length ? Buffer.concat([body, rest]) : body;
  }

  sealText(plain: string, associated = ''): string {
    return Sealer.TEXT_PREFIX + this.sealBytes(Buffer.from(plain, 'utf8'), associated).toString('base64url');
  }

  openText(sealed: string, associated = ''): string {
    if (!Sealer.isSealedText(sealed)) throw new Error('not a sealed text');
    return this.openBytes(Buffer.from(sealed.slice(Sealer.TEXT_PREFIX.length), 'base64url'), associated).toString('utf8');
  }

  static isSealedText(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(Sealer.TEXT_PREFIX);
  }
}

/**
 * Random bytes (nonces, data keys) taken from a pool filled 16 KiB at a time from the CSPRNG, as
 * Node's own randomUUID caches its entropy: one call into OpenSSL per few hundred seals rather
 * than one per seal, which cost as much as the encryption itself. The answer is a view of the
 * pool, valid until the next call: copy it.
 */
const POOL_BYTES = 16 * 1024;
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function random(n: number): Buffer {
  if (used + n > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const out = pool.subarray(used, used + n);
  used += n;
  return out;
}

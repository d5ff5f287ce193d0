import { createSecretKey, type KeyObject } from 'node:crypto';
import { isSealedText, KEY_BYTES, openBytes, openText, randomBytes, sealBytes, TEXT_PREFIX } from './sealed-format.js';

/**
 * Authenticated encryption for what must not lie in plaintext at rest (decisions.md §17): webhook
 * signing secrets under the main key, and each constituent's data key, itself wrapped by the main
 * key, for its personal fields. The bytes and text of a sealed value are sealed-format.js's, which
 * the sealing and key store threads use too: AES-256-GCM, a random 96-bit nonce per seal, the
 * format's version first, the associated data binding a value to where it belongs.
 */
export class Sealer {
  static readonly KEY_BYTES = KEY_BYTES;
  /** The text form's prefix: `sealed:v1:` then base64url(version | nonce | tag | ciphertext). */
  static readonly TEXT_PREFIX = TEXT_PREFIX;

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
    return Buffer.from(randomBytes(Sealer.KEY_BYTES));
  }

  /** version byte | nonce | tag | ciphertext. */
  sealBytes(plain: Buffer, associated = ''): Buffer {
    return sealBytes(this.key, plain, associated);
  }

  /** Throws when the bytes were not sealed by this key for `associated`, or were altered. */
  openBytes(sealed: Buffer, associated = ''): Buffer {
    return openBytes(this.key, sealed, associated);
  }

  sealText(plain: string, associated = ''): string {
    return TEXT_PREFIX + this.sealBytes(Buffer.from(plain, 'utf8'), associated).toString('base64url');
  }

  openText(sealed: string, associated = ''): string {
    return openText(this.key, sealed, associated);
  }

  static isSealedText(value: unknown): value is string {
    return isSealedText(value);
  }
}

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

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

  /** A fresh random key, for example a constituent's data key. */
  static newKey(): Buffer {
    return randomBytes(Sealer.KEY_BYTES);
  }

  /** version byte | nonce | tag | ciphertext. */
  sealBytes(plain: Buffer, associated = ''): Buffer {
    const nonce = randomBytes(Sealer.NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(associated, 'utf8'));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.of(Sealer.VERSION), nonce, cipher.getAuthTag(), body]);
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
    return Buffer.concat([decipher.update(sealed.subarray(head)), decipher.final()]);
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

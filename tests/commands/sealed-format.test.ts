import { describe, expect, it } from 'vitest';
import { Sealer } from '../../eventlog/sealing.js';
import { openText, sealText } from '../../eventlog/sealed-format.js';

/*
 * A sealed value lies at rest in the log, the key store and the read models for as long as the
 * data is kept (decisions.md §17), so its format is pinned by a value sealed before the format had
 * one source: every thread that seals (the main thread's Sealer, the sealing thread, the key
 * store's) goes through sealed-format.js, and what they wrote then still opens now.
 */
describe('the sealed format', () => {
  const key = Buffer.alloc(32, 7);
  const written = 'sealed:v1:ASyDULaQGnKfNdIXQD86d8TOQew09fKposJ4Lb3w5p0AYqvrFvM8jQMtIX2o8TPbZ_TwubRV97k';

  it('opens a value written by an earlier build, and only where it was bound', () => {
    expect(new Sealer(key).openText(written, 'constituent-1:personal')).toBe('{"email":"ada@example.org"}');
    expect(openText(key, written, 'constituent-1:personal')).toBe('{"email":"ada@example.org"}');
    expect(() => openText(key, written, 'constituent-2:personal')).toThrow();
    expect(() => openText(Buffer.alloc(32, 8), written, 'constituent-1:personal')).toThrow();
  });

  it('is one layout on every side: version 1, a fresh nonce, the tag, the ciphertext', () => {
    const a = sealText(key, 'x', 'here');
    const b = new Sealer(key).sealText('x', 'here');
    const bytes = (t: string) => Buffer.from(t.slice('sealed:v1:'.length), 'base64url');
    expect(bytes(a)).toHaveLength(1 + 12 + 16 + 1);
    expect(bytes(a)[0]).toBe(1);
    expect(bytes(a).subarray(1, 13)).not.toEqual(bytes(b).subarray(1, 13));
    expect(new Sealer(key).openText(a, 'here')).toBe('x');
    expect(openText(key, b, 'here')).toBe('x');
  });
});

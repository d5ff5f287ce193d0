import { expect, it } from 'vitest';
import type { KeyStore } from '../../eventlog/keys.js';

/**
 * decisions.md §17: what every key store promises (SQLite in the data dir, MongoDB in
 * production). `open` gives a store and a way to open another on the same backing.
 */
export function keyStoreContract(name: string, open: () => Promise<{ store: KeyStore; reopen: () => Promise<KeyStore>; cleanup: () => Promise<void> }>): void {
  it(`${name}: makes a 32-byte key on first use and answers the same one after, and after reopening`, async () => {
    const { store, reopen, cleanup } = await open();
    try {
      expect(await store.keyFor('constituent-1', false)).toBeNull();
      const key = await store.keyFor('constituent-1', true);
      expect(key).toHaveLength(32);
      expect(await store.keyFor('constituent-1', true)).toEqual(key);
      expect(await store.keyFor('constituent-1', false)).toEqual(key);
      const other = await store.keyFor('constituent-2', true);
      expect(other).not.toEqual(key);
      expect(await (await reopen()).keyFor('constituent-1', false)).toEqual(key);
    } finally {
      await cleanup();
    }
  });

  it(`${name}: agrees on one key when first uses race`, async () => {
    const { store, reopen, cleanup } = await open();
    try {
      const second = await reopen();
      const keys = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? store : second).keyFor('constituent-7', true)));
      for (const k of keys) expect(k).toEqual(keys[0]);
    } finally {
      await cleanup();
    }
  });

  it(`${name}: destroys a key for good (idempotent), and never makes it again; other subjects keep theirs`, async () => {
    const { store, reopen, cleanup } = await open();
    try {
      await store.keyFor('constituent-3', true);
      const kept = await store.keyFor('constituent-4', true);
      await store.destroy('constituent-3');
      await store.destroy('constituent-3');
      expect(await store.keyFor('constituent-3', true)).toBeNull();
      expect(await (await reopen()).keyFor('constituent-3', true)).toBeNull();
      expect(await store.keyFor('constituent-4', false)).toEqual(kept);
      // A subject destroyed before it had a key gets none afterwards either.
      await store.destroy('constituent-5');
      expect(await store.keyFor('constituent-5', true)).toBeNull();
    } finally {
      await cleanup();
    }
  });
}

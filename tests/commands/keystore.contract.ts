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

  it(`${name}: answers many subjects in one call, making only the missing keys, and agrees with one-at-a-time answers`, async () => {
    const { store, reopen, cleanup } = await open();
    try {
      const kept = await store.keyFor('constituent-11', true);
      await store.destroy('constituent-12');
      const subjects = ['constituent-11', 'constituent-12', 'constituent-13', 'constituent-14'];
      expect(await store.keysFor(subjects, false)).toEqual(new Map([['constituent-11', kept], ['constituent-12', null]]));
      const made = await store.keysFor(subjects, true);
      expect([...made.keys()].sort()).toEqual(subjects);
      expect(made.get('constituent-11')).toEqual(kept);
      expect(made.get('constituent-12')).toBeNull();
      expect(made.get('constituent-13')).toHaveLength(32);
      expect(made.get('constituent-14')).not.toEqual(made.get('constituent-13'));
      const other = await reopen();
      for (const s of subjects) expect(await other.keyFor(s, true)).toEqual(made.get(s));
      // Overlapping batches racing from two stores agree on every key.
      const racing = await Promise.all([store.keysFor(['constituent-15', 'constituent-16'], true), other.keysFor(['constituent-16', 'constituent-17'], true)]);
      expect(racing[0].get('constituent-16')).toEqual(racing[1].get('constituent-16'));
      expect(await other.keyFor('constituent-15', false)).toEqual(racing[0].get('constituent-15'));
    } finally {
      await cleanup();
    }
  });
}

import Database from 'better-sqlite3';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteKeyStore } from '../../eventlog/keys.js';
import { Sealer } from '../../eventlog/sealing.js';
import { until } from './eventlog.contract.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * The embedded key store makes the keys of new constituents on a thread of its own once it has
 * started (the first batches are made on the main thread meanwhile): what it makes opens on the
 * main thread and in another process, agrees with racing first uses, and keeps tombstones.
 */
const tempDir = tempDirs('turnout-keys-thread-');
afterEach(() => vi.restoreAllMocks());
const tempFile = () => path.join(tempDir(), 'keys.sqlite');
const subjects = (from: number, n: number) => Array.from({ length: n }, (_, i) => `constituent-${from + i}`);
const threadOf = (store: SqliteKeyStore) => (store as unknown as { thread: { ready: boolean } | null }).thread;

async function started(file: string, main: Sealer): Promise<SqliteKeyStore> {
  const store = new SqliteKeyStore(file, main);
  await store.keyFor('constituent-1', true);
  await until('the key store thread to start', () => threadOf(store)?.ready === true);
  return store;
}

describe('the embedded key store\u2019s thread', () => {
  it('makes a batch of keys there, which the main thread and another process open as the same keys', async () => {
    const file = tempFile();
    const main = new Sealer(Sealer.newKey());
    const store = await started(file, main);
    await store.destroy('constituent-600');
    const wraps = vi.spyOn(main, 'sealBytes');
    const reads = vi.spyOn((store as unknown as { stmt: { many: { all: () => unknown } } }).stmt.many, 'all');
    const made = await store.keysFor(subjects(2, 600), true);
    // Not wrapped on this thread, nor the rows already there read here first: the key store's thread made them.
    expect(wraps).not.toHaveBeenCalled();
    expect(reads).not.toHaveBeenCalled();
    expect([...made.values()].filter((k) => k !== null).map((k) => k!.length)).toEqual(Array(599).fill(32));
    // The tombstone holds: a destroyed key is never made again.
    expect(made.get('constituent-600')).toBeNull();
    expect(new Set([...made.values()].map((k) => k?.toString('hex'))).size).toBe(600);
    const again = await store.keysFor(subjects(2, 600), false);
    const other = new SqliteKeyStore(file, main);
    const elsewhere = await other.keysFor(subjects(2, 600), false);
    for (const s of subjects(2, 600)) {
      expect(again.get(s)).toEqual(made.get(s));
      expect(elsewhere.get(s)).toEqual(made.get(s));
    }
    await other.close();
    await store.close();
    const bytes = Buffer.concat(readdirSync(path.dirname(file)).map((f) => readFileSync(path.join(path.dirname(file), f))));
    for (const key of [...made.values()].slice(0, 50)) expect(bytes.includes(key!)).toBe(false);
  });

  it('leaves no byte of a key it made and that was then destroyed in the files, its own connection open (WAL included)', async () => {
    const file = tempFile();
    const main = new Sealer(Sealer.newKey());
    const store = await started(file, main);
    const made = await store.keysFor(subjects(2, 100), true);
    const peek = new Database(file, { readonly: true });
    const wrapped = peek.prepare<[], { wrapped: string }>("SELECT wrapped FROM data_keys WHERE subject = 'constituent-50'").get()!.wrapped;
    peek.close();
    const files = () => Buffer.concat(readdirSync(path.dirname(file)).map((f) => readFileSync(path.join(path.dirname(file), f))));
    expect(files().includes(Buffer.from(wrapped))).toBe(true);
    await store.destroy('constituent-50');
    expect(files().includes(Buffer.from(wrapped))).toBe(false);
    expect(files().includes(made.get('constituent-50')!)).toBe(false);
    expect(await store.keyFor('constituent-50', true)).toBeNull();
    await store.close();
  });

  it('agrees on one key when two stores\u2019 threads race to make the same subjects', async () => {
    const file = tempFile();
    const main = new Sealer(Sealer.newKey());
    const [a, b] = await Promise.all([started(file, main), started(file, main)]);
    const [fromA, fromB] = await Promise.all([a.keysFor(subjects(10, 300), true), b.keysFor(subjects(10, 300), true)]);
    for (const s of subjects(10, 300)) expect(fromA.get(s)).toEqual(fromB.get(s));
    await a.close();
    await b.close();
  });

  it('makes a batch on the main thread when the thread stops under it, with the keys the thread committed kept', async () => {
    const file = tempFile();
    const main = new Sealer(Sealer.newKey());
    const store = await started(file, main);
    const asked = store.keysFor(subjects(2, 300), true);
    // The thread dies with the batch in flight (the batch is sent on the next turn).
    await new Promise((resolve) => setImmediate(resolve));
    await (store as unknown as { thread: { worker: { terminate(): Promise<number> } } }).thread.worker.terminate();
    const made = await asked;
    expect([...made.values()].map((k) => k?.length)).toEqual(Array(300).fill(32));
    // The same keys from the file: none was made twice.
    const other = new SqliteKeyStore(file, main);
    const read = await other.keysFor(subjects(2, 300), false);
    for (const s of subjects(2, 300)) expect(read.get(s)).toEqual(made.get(s));
    await other.close();
    await store.close();
  });

  it('fails a batch that close() overtakes, and starts no thread for it', async () => {
    const store = new SqliteKeyStore(tempFile(), new Sealer(Sealer.newKey()));
    const asked = store.keysFor(subjects(1, 3), true);
    await store.close();
    await expect(asked).rejects.toThrow('the key store is closed');
    expect(threadOf(store)).toBeNull();
  });
});

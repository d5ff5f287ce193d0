import Database from 'better-sqlite3';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TTL_MS } from '../../runtime/idempotency/port.js';
import { SqliteIdempotencyStore } from '../../runtime/idempotency/sqlite.js';
import { until } from '../commands/eventlog.contract.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * The embedded idempotency store runs its statements on a thread of its own once it has started
 * (the turns before run on the main thread): in the order asked, an answer kept durably before
 * its promise resolves, the turns asked while one is on the thread committed together, a thread
 * that stops failing its calls and the next turn starting another, and close() draining.
 */
const tempDir = tempDirs('turnout-idem-thread-');
afterEach(() => vi.restoreAllMocks());
const answer = (n: number) => ({ status: 201, body: JSON.stringify({ created: true, n }), headers: { 'content-type': 'application/json' } });
const threadOf = (store: SqliteIdempotencyStore) => (store as unknown as { thread: { ready: boolean; worker: Worker } | null }).thread;
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

async function started(redactPage = 500): Promise<{ store: SqliteIdempotencyStore; db: Database.Database; file: string }> {
  const file = path.join(tempDir(), 'idempotency.sqlite');
  const db = new Database(file);
  const store = new SqliteIdempotencyStore(db, redactPage);
  await until('the idempotency store\u2019s thread to start', () => threadOf(store)?.ready === true);
  return { store, db, file };
}

/** Holds the file's write lock from another connection, so that the thread's next transaction waits (in SQLite's busy handler) until it is let go. */
function writeLock(file: string): () => void {
  const other = new Database(file);
  other.exec('BEGIN IMMEDIATE');
  return () => {
    other.exec('COMMIT');
    other.close();
  };
}

describe('the embedded idempotency store\u2019s thread', () => {
  it('runs the statements there, in the order asked, and an answer is in the file once its promise resolves', async () => {
    const { store, db, file } = await started();
    const here = vi.spyOn(db, 'transaction');
    // Racing requests with one key in one turn: exactly the first starts.
    expect(await Promise.all([store.begin('key:1', 'k', 'f', 1000), store.begin('key:1', 'k', 'f', 1000), store.begin('key:1', 'j', 'f', 1000)])).toEqual([
      { state: 'started' },
      { state: 'running', fingerprint: 'f' },
      { state: 'started' },
    ]);
    // An answer, a release, a take of each key, in one turn: the takes and the release go first,
    // in order, so the take of the key whose answer is being kept finds it still running.
    const [kept, , running, again] = await Promise.all([store.complete('key:1', 'k', answer(1)), store.release('key:1', 'j'), store.begin('key:1', 'k', 'g', 1001), store.begin('key:1', 'j', 'g', 1001)]);
    expect(kept).toBeUndefined();
    expect(running).toEqual({ state: 'running', fingerprint: 'f' });
    expect(again).toEqual({ state: 'started' });
    expect(await store.begin('key:1', 'k', 'g', 1002)).toEqual({ state: 'done', fingerprint: 'f', answer: answer(1) });
    // Read from another connection the moment the promise resolved: committed, not on its way.
    await store.complete('key:1', 'j', answer(2));
    const peek = new Database(file, { readonly: true });
    expect(peek.prepare("SELECT status, body FROM idempotency_keys WHERE key = 'j'").get()).toEqual({ status: 201, body: answer(2).body });
    peek.close();
    expect(here).not.toHaveBeenCalled();
    await store.close();
  });

  it('commits the turns asked while one is on the thread together, their takes in one call ahead of their answers in another', async () => {
    const { store, file } = await started();
    await Promise.all(['a', 'b', 'c'].map((k) => store.begin('s', k, 'f', 1000)));
    const calls = vi.spyOn(threadOf(store)!.worker, 'postMessage');
    const letGo = writeLock(file);
    const first = store.complete('s', 'a', answer(1));
    await until('the first turn on the thread, waiting for the lock', () => calls.mock.calls.length === 1);
    const second = store.complete('s', 'b', answer(2));
    await nextTurn();
    const third = Promise.all([store.release('s', 'c'), store.begin('s', 'a', 'g', 1001), store.begin('s', 'c', 'g', 1001)]);
    await nextTurn();
    expect(calls).toHaveBeenCalledTimes(1);
    letGo();
    await first;
    // The second and third turns' takes and release come back before the second turn's answer is kept.
    let secondKept = false;
    void second.then(() => (secondKept = true));
    expect((await third).slice(1)).toEqual([{ state: 'done', fingerprint: 'f', answer: answer(1) }, { state: 'started' }]);
    expect(secondKept).toBe(false);
    await second;
    expect(await store.begin('s', 'b', 'g', 1002)).toEqual({ state: 'done', fingerprint: 'f', answer: answer(2) });
    expect(calls).toHaveBeenCalledTimes(4);
    await store.close();
  });

  it('fails the calls of a thread that stops, with a clear error, and the next turn starts another', async () => {
    const { store, file } = await started();
    await store.begin('s', 'k', 'f', 1000);
    const dying = threadOf(store)!;
    const sent = vi.spyOn(dying.worker, 'postMessage');
    const letGo = writeLock(file);
    const cut = store.complete('s', 'k', answer(1));
    await until('the answer on the thread, waiting for the lock', () => sent.mock.calls.length === 1);
    const ended = dying.worker.terminate();
    letGo();
    await expect(cut).rejects.toThrow(/the idempotency store's thread stopped \(exit code \d+\) with this request's key under way: retry it/);
    await ended;
    // The next turn runs (here, while another thread starts), and later turns on the new thread.
    expect(await store.begin('s', 'other', 'f', 1000)).toEqual({ state: 'started' });
    await until('another thread', () => threadOf(store) !== null && threadOf(store) !== dying && threadOf(store)!.ready);
    const calls = vi.spyOn(threadOf(store)!.worker, 'postMessage');
    await store.complete('s', 'other', answer(2));
    expect(calls).toHaveBeenCalledTimes(1);
    expect(await store.begin('s', 'other', 'g', 1001)).toEqual({ state: 'done', fingerprint: 'f', answer: answer(2) });
    await store.close();
  });

  it('drains at close: what was asked is committed, on the thread, before the file closes', async () => {
    const { store, file } = await started();
    const begun = await Promise.all(Array.from({ length: 20 }, (_, i) => store.begin('s', `k${i}`, 'f', 1000)));
    expect(begun.every((b) => b.state === 'started')).toBe(true);
    const kept = Array.from({ length: 20 }, (_, i) => store.complete('s', `k${i}`, answer(i)));
    const worker = threadOf(store)!.worker;
    await store.close();
    await Promise.all(kept);
    expect(threadOf(store)).toBeNull();
    expect(worker.threadId).toBe(-1); // ended
    const again = new SqliteIdempotencyStore(new Database(file), 500, null);
    for (let i = 0; i < 20; i++) expect(await again.begin('s', `k${i}`, 'g', 2000)).toEqual({ state: 'done', fingerprint: 'f', answer: answer(i) });
    await again.close();
    await expect(store.begin('s', 'late', 'f', 3000)).rejects.toThrow(/not open/);
  });

  it('redacts stored answers a page at a time there, and leaves an entry a take renewed in between alone', async () => {
    const { store } = await started(3);
    const personal = (email: string) => ({ status: 200, body: JSON.stringify({ Email1: email }), headers: {} });
    for (let i = 0; i < 7; i++) {
      // k0 expires first: a take renews it between the page's read and its rewrite.
      await store.begin('s', `k${i}`, 'f', i ? TTL_MS : 1);
      await store.complete('s', `k${i}`, personal(i % 2 ? 'kept@example.org' : 'gone@example.org'));
    }
    let renewed: Promise<unknown> | undefined;
    const redacted = await store.redact(
      (body) => {
        renewed ??= store.begin('s', 'k0', 'f2', 1 + TTL_MS);
        return body.includes('gone@example.org');
      },
      (body) => body.replace('"gone@example.org"', 'null'),
    );
    expect(await renewed).toEqual({ state: 'started' });
    expect(redacted).toBe(3);
    const emails = [];
    for (let i = 0; i < 7; i++) {
      const b = await store.begin('s', `k${i}`, 'other', 2 + TTL_MS);
      emails.push(b.state === 'done' ? JSON.parse(b.answer.body).Email1 : b.state);
    }
    expect(emails).toEqual(['running', 'kept@example.org', null, 'kept@example.org', null, 'kept@example.org', null]);
    await store.close();
  });
});

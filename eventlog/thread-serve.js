// @ts-check
/*
 * The thread's side of thread-calls.ts (ThreadCalls): a worker that answers calls by id, plain
 * JavaScript so that the threads written in it (the key store's, the sealing thread, the
 * idempotency store's) run from the sources under the test runner and, copied by tsc, from the
 * build. One place for the protocol: `{id, ...answer}`, or `{id, failed}` when the call threw;
 * `{close: true}` ends the thread's own resources and is answered `{id}`; `{ready: true}` once
 * calls are taken.
 */

/**
 * Answers every call on `port` by `handle` (its answer's fields, and what to transfer rather
 * than copy), then says the thread is ready.
 * @template M
 * @param {import('node:worker_threads').MessagePort} port
 * @param {(message: M) => { answer: Record<string, unknown>; transfer?: ArrayBuffer[] }} handle
 * @param {() => void} [close] the thread's own ending, at `{close: true}`
 */
export function serveCalls(port, handle, close) {
  port.on('message', (/** @type {M & { id: number; close?: true }} */ m) => {
    if (m.close) {
      close?.();
      port.postMessage({ id: m.id });
      return;
    }
    try {
      const { answer, transfer } = handle(m);
      port.postMessage({ id: m.id, ...answer }, transfer);
    } catch (err) {
      port.postMessage({ id: m.id, failed: err instanceof Error ? err.message : String(err) });
    }
  });
  port.postMessage({ ready: true });
}

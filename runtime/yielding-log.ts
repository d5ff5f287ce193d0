import type { EventLog } from '../eventlog/port.js';

/**
 * The log as a follower on the main thread should read it: the same log, except that a
 * subscription's handler gives the event loop a turn (setImmediate) after every `sliceMs` of
 * work. An embedded log delivers a catch-up through promises that are already resolved, so
 * without this a follower catching up from a long log would hold the thread, and the HTTP
 * listener (/healthz, /readyz, every request) would wait, until it had read the whole log.
 * Order is kept: the handler is still awaited before the next event is delivered.
 */
export function yieldingLog(log: EventLog, sliceMs = 20): EventLog {
  return {
    append: (stream, events, expected) => log.append(stream, events, expected),
    readStream: (stream) => log.readStream(stream),
    head: () => log.head(),
    close: () => log.close(),
    ownWritesOnlySince: log.ownWritesOnlySince ? (p) => log.ownWritesOnlySince!(p) : undefined,
    countAfter: log.countAfter ? (p) => log.countAfter!(p) : undefined,
    failure: log.failure ? () => log.failure!() : undefined,
    subscribe(from, handler, options) {
      let sliceStart = performance.now();
      return log.subscribe(
        from,
        async (event) => {
          if (performance.now() - sliceStart >= sliceMs) {
            await new Promise<void>((resolve) => setImmediate(resolve));
            sliceStart = performance.now();
          }
          return handler(event);
        },
        options,
      );
    },
  };
}

import type { CommandDeps } from '../commands/deps.js';
import type { Position } from '../domain/shared/events.js';
import type { EventLog } from '../eventlog/port.js';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing-port.js';

/**
 * Times and counts every append this process makes (decisions.md §15). Its own `append` is
 * replaced rather than the log wrapped, so the one instance keeps every optional capability the
 * port names (commit notices, team reads) as it is. A traced write's append is its command's
 * span (commands/aggregate.ts), not this hook's.
 */
export function instrumentAppend(log: EventLog, metrics: Metrics | null): void {
  if (!metrics) return;
  const append = log.append.bind(log);
  // A callback on the append's own promise, not an async function around it: one promise and
  // one turn of the microtask queue less on every write. The log's own answer is given back, as a
  // later append may name it as the one it follows (EventLog.append's `after`).
  log.append = (stream, events, expected, order) => {
    const started = performance.now();
    let appending: ReturnType<EventLog['append']>;
    try {
      appending = append(stream, events, expected, order);
    } catch (err) {
      return Promise.reject(err);
    }
    appending.then(
      () => metrics.appendedTo(stream, events.length, (performance.now() - started) / 1000),
      () => {},
    );
    return appending;
  };
}

/** The wait for the read models (read-your-writes) as a span of the write's request, when tracing is on. */
export function traceSettle(settle: (position: Position | null) => Promise<void>, tracing: Tracing | null): CommandDeps['settle'] {
  return tracing ? (position, ctx) => (ctx?.trace ? ctx.trace.span('wait for read models', () => settle(position)) : settle(position)) : settle;
}

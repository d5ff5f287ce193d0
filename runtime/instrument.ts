import type { EventLog } from '../eventlog/port.js';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing-port.js';

/**
 * Times and counts every append this process makes (decisions.md §15), and makes it a span when
 * tracing is on. Its own `append` is replaced rather than the log wrapped, so the one instance
 * keeps every optional capability the port names (the inline step, team reads) as it is.
 */
export function instrumentAppend(log: EventLog, metrics: Metrics | null, tracing: Tracing | null): void {
  if (!metrics && !tracing) return;
  const append = log.append.bind(log);
  const measured: EventLog['append'] = metrics
    ? async (stream, events, expected) => {
        const started = performance.now();
        const r = await append(stream, events, expected);
        metrics.appendedTo(stream, events.length, (performance.now() - started) / 1000);
        return r;
      }
    : append;
  log.append = tracing ? (stream, events, expected) => tracing.span('append', () => measured(stream, events, expected)) : measured;
}

/** The wait for the read models (read-your-writes) as a span of its own, when tracing is on. */
export function traceSettle<A extends unknown[]>(settle: (...args: A) => Promise<void>, tracing: Tracing | null): (...args: A) => Promise<void> {
  return tracing ? (...args: A) => tracing.span('wait for read models', () => settle(...args)) : settle;
}

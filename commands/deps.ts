import type { EventLog, Position } from './eventlog/port.js';
import type { IdAllocator } from './ids.js';
import type { ReadStore } from '../projections/store/port.js';

/** What command handlers need: the log to decide on, the read store for look-ups, ids, and a way to wait for reads. */
export interface CommandDeps {
  log: EventLog;
  store: ReadStore;
  ids: IdAllocator;
  /** Resolves once the read models include `position` (read-your-writes). */
  settle: (position: Position | null) => Promise<void>;
}

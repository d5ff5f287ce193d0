import type { EventLog } from '../eventlog/port.js';
import type { Position } from '../domain/shared/events.js';
import type { WriteContext } from './context.js';
import type { IdAllocator } from './ids.js';
import type { ReadStore } from '../projections/store/port.js';
import type { Sealer } from '../eventlog/sealing.js';

/** What command handlers need: the log to decide on, the read store for look-ups, ids, and a way to wait for reads. */
export interface CommandDeps {
  log: EventLog;
  store: ReadStore;
  ids: IdAllocator;
  /**
   * Resolves once the read models include `position` (read-your-writes). Given the write's
   * context, a traced wait is a span of the write's request.
   */
  settle: (position: Position | null, ctx?: Pick<WriteContext, 'trace'>) => Promise<void>;
  /** Why a webhook URL may not be used (the dispatcher's SSRF guard), or null when it may. */
  checkWebhookUrl: (url: string) => Promise<string | null>;
  /**
   * A number that changes whenever an API key's record may have changed, read on every request
   * (projections/api-key-mark.ts): where this process alone writes its read models. Left out
   * elsewhere; the key check then goes by the store's change mark, or reads.
   */
  keyMark?: () => number;
  /** The main key's sealer (TURNOUT_MAIN_KEY or <dataDir>/main-key, decisions.md §17): what must not lie in plaintext at rest. */
  mainSealer: Sealer;
}

import type { CommandDeps } from '../commands/deps.js';
import type { Config } from './config.js';
import type { RateLimiter } from './ratelimit.js';

/** Everything a route can reach: the command dependencies, the limiter, configuration and health. */
export interface Services extends CommandDeps {
  config: Config;
  limiter: RateLimiter | null;
  /**
   * Where read models are per process but the log is shared, brings them up to the log's head
   * before a request is served (read-your-writes across processes; docs/production.md).
   */
  /** Null when there is nothing to wait for (the common case, answered without a promise). */
  settleReads?: () => Promise<void> | null;
  /** True once stores are reachable and read models have caught up (GET /readyz). */
  ready: () => Promise<boolean>;
  /** Optional parts started by later roles (dispatcher, mailer) hang their own handles here. */
  extras: Record<string, unknown>;
}

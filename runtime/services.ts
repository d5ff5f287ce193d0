import type Database from 'better-sqlite3';
import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandDeps } from '../commands/deps.js';
import type { DeliveryLog } from '../dispatcher/deliveries.js';
import type { Throttle } from '../dispatcher/throttle.js';
import type { WebhookOperations } from '../dispatcher/operations.js';
import type { DeliveryQueue } from '../dispatcher/queue/port.js';
import type { ReplayStore } from '../dispatcher/replays.js';
import type { FeedTable } from '../dispatcher/feed-table.js';
import type { FeedModel } from '../dispatcher/feed-model.js';
import type { FollowerStatus } from '../eventlog/follower.js';
import type { ProjectionRunner } from '../projections/engine/main-thread.js';
import type { ProjectorThread } from '../projections/engine/thread.js';
import type { Config } from './config.js';
import type { IdempotencyStore } from './idempotency/port.js';
import type { RateLimiter } from './ratelimit.js';
import type { Metrics } from './metrics.js';
import type { Tracing } from './tracing-port.js';
import type { Sealer } from '../eventlog/sealing.js';
import type { Erasure } from './erasure.js';

/** Everything a route can reach: the command dependencies, the limiter, configuration and health. */
export interface Services extends CommandDeps {
  config: Config;
  limiter: RateLimiter | null;
  /**
   * Where read models are per process but the log is shared, brings them up to the log's head
   * before a request is served (read-your-writes across processes; docs/production.md).
   * Null when there is nothing to wait for (the common case, answered without a promise).
   */
  settleReads?: () => Promise<void> | null;
  /**
   * Null once this process's read models have caught up with the log as it stood at start (or
   * when it has none to catch up), else the promise of that: requests wait on it (api/read-gate.ts).
   */
  readsCaughtUp?: () => Promise<void> | null;
  /** True until every part of this process's role has started: not ready meanwhile (GET /readyz). */
  starting?: () => boolean;
  /** Resolves once the stores answer; throws while one does not, or the log can append no more (GET /readyz). */
  reachable: () => Promise<void>;
  /** Each log follower this process runs, with its readiness (GET /readyz, decisions.md §1). */
  followers: () => Promise<FollowerStatus[]>;
  /** Every webhook delivery attempt, per endpoint (the admin surface reads it). */
  deliveries: DeliveryLog;
  /** Webhook replay jobs (decisions.md §12), beside the delivery log. */
  replays: ReplayStore;
  /** The process's delivery queue, opened on first use. */
  webhookQueue: () => Promise<DeliveryQueue>;
  /**
   * The endpoints' throttle (decisions.md §12 `maxPerSecond`), opened on first use: the worker's
   * attempts and the test pings ask the same one (shared through NATS by every process there).
   */
  webhookThrottle: () => Promise<Throttle>;
  /** Test, resend, replay and stats of an endpoint (decisions.md §12). */
  webhooks: WebhookOperations;
  /** The change feed's table in the embedded read database (dispatcher/feed-table.ts); absent elsewhere. */
  feedTable?: FeedTable;
  /** The change feed's collection in the read store (dispatcher/feed-model.ts): wherever the read models are not the data dir's file. */
  feedModel?: FeedModel;
  /** Idempotency-Key answers (decisions.md §11): embedded SQLite, or MongoDB shared by every API process. */
  idempotency: IdempotencyStore;
  /** Tasks in this process's delivery queue, once it has opened one; null before. */
  queueDepth: () => Promise<number | null>;
  /** This process's Prometheus families (GET /metrics, decisions.md §15); null when turned off (the cost bench). */
  metrics: Metrics | null;
  /** The main key's sealer (decisions.md §17): webhook secrets and what else must not lie in plaintext at rest. */
  mainSealer: Sealer;
  /** Erasure of a constituent (decisions.md §17), durable across a crash (runtime/erasure.ts). */
  erasure: Erasure;
  /** Tracing, only while OTEL_EXPORTER_OTLP_ENDPOINT is set; null otherwise, and then no tracing code runs. */
  tracing: Tracing | null;
}

/** One process's stores and parts, opened by openRuntime for its role. */
export interface Runtime {
  services: Services;
  /** This process's projectors, unless a shared read store is written by another process. */
  runner: ProjectionRunner | null;
  /** The embedded default's projector thread (read models in the data dir's SQLite file), with its catch-up progress. */
  readModels: ProjectorThread | null;
  /** The process's one NATS connection (TURNOUT_NATS_URL), shared by the limiter, leases and the queue. */
  nats: NatsConnection | null;
  /** The embedded SQLite file for webhook state (delivery queue, delivery log), unless MongoDB keeps the log. */
  webhookDb: Database.Database | null;
  /** Stops everything started here, in reverse order. */
  close: () => Promise<void>;
  onClose: (fn: () => Promise<void> | void) => void;
  /** Starts the projectors following the log, when openRuntime was told not to (`follow: false`). */
  startFollowing: () => Promise<void>;
  /** Resolves once the read models have caught up with the log as it stood when they began following it. */
  readModelsCaughtUp: () => Promise<void>;
  /** Says every part of the role has started: readiness now depends on the followers alone. */
  started: () => void;
  /** Adds a follower to readiness; its status is null while this process does not run it (a lease elsewhere). */
  watchFollower: (status: () => Promise<FollowerStatus | null>) => void;
}

import type { NatsConnection } from '@nats-io/transport-node';
import type { MongoClient } from 'mongodb';
import { comparePositions, type Position } from '../domain/shared/events.js';
import { natsConnectOptions } from '../dispatcher/queue/nats-connect.js';
import { type EventLog } from '../eventlog/port.js';
import { type Lease, LeaseKeeper } from '../projections/lease.js';
import type { ProjectionRunner } from '../projections/engine/main-thread.js';
import type { Config } from './config.js';
import { MemoryRateLimiter, type RateLimiter } from './ratelimit.js';
import { FallbackRateLimiter } from './ratelimit-fallback.js';
import { NatsLink } from '../dispatcher/queue/nats-link.js';

/**
 * What changes when several processes share the stores (docs/production.md). openRuntime asks
 * these; everything here is a no-op in the embedded single-process default.
 */

/** One NATS connection per process, shared by the rate limiter, the lease and the delivery queue. */
export async function openNats(config: Config): Promise<NatsConnection | null> {
  if (!config.natsUrl) return null;
  const { connect } = await import('@nats-io/transport-node');
  // Credentials in the URL are taken out and passed explicitly: nats.js 3.x ignores them there.
  return connect({ ...natsConnectOptions(config.natsUrl), name: `turnout-${config.role}-${process.pid}`, maxReconnectAttempts: -1 });
}

/**
 * Per-key limits: in NATS KV when API processes share it, so the limit holds whichever serves;
 * each process's own count while NATS does not answer (decisions.md §1, ratelimit-fallback.ts).
 */
export async function openLimiter(config: Config, nats: NatsConnection | null): Promise<RateLimiter | null> {
  const limits = { perSecond: config.rateLimitPerSecond, perMinute: config.rateLimitPerMinute };
  if (limits.perSecond === 0 && limits.perMinute === 0) return null;
  if (!nats) return new MemoryRateLimiter(limits);
  const { NatsRateLimiter } = await import('./ratelimit-nats.js');
  const link = new NatsLink(nats);
  return new FallbackRateLimiter(await NatsRateLimiter.open(nats, limits), limits, { connected: () => link.up });
}

/**
 * Read models kept in this process's memory while the log is shared with other processes
 * (EventStoreDB without MongoDB). Another process may have answered a write that this one has not
 * projected yet, so every request first settles to the log's head (a hook in api/app.ts): a write
 * answered anywhere before the request began is then visible here. The embedded file needs none:
 * its read models are one database every process reads, and a write answers once it holds it.
 */
export function readsSettleToHead(config: Config): boolean {
  return !config.mongoUrl && Boolean(config.eventStoreUrl);
}

export function readSettler(log: EventLog, waitFor: (p: Position) => Promise<void>): () => Promise<void> | null {
  // Writes of this process settle before they answer, so only another writer's appends can be
  // missing here. Where the log can tell at once that there are none since the last settle, a
  // request waits for nothing (the single-process default pays one indexed query).
  let settled: Position | null | undefined;
  const settleTo = async (head: Position | null) => {
    if (head) await waitFor(head);
    if (settled === undefined || settled === null || (head && comparePositions(head, settled) > 0)) settled = head;
  };
  return () => (settled !== undefined && log.ownWritesOnlySince?.(settled) ? null : log.head().then(settleTo));
}

/**
 * The leases of a build's projector versions (projections/engine/ownership.ts), in the same place
 * as the build's lease: NATS KV where NATS is configured, else MongoDB's `_leases`, through one
 * client for all of them, opened at the first.
 */
export function versionLeases(config: Config, nats: NatsConnection | null): { leaseOf: (name: string) => Promise<Lease>; close: () => Promise<void> } {
  if (nats) {
    return {
      leaseOf: async (name) => {
        const { NatsLease } = await import('../projections/lease-nats.js');
        return NatsLease.open(nats, name);
      },
      close: async () => {},
    };
  }
  let client: Promise<MongoClient> | null = null;
  return {
    leaseOf: async (name) => {
      const { MongoLease } = await import('../projections/lease-mongo.js');
      // Loaded only here: the embedded default never loads the MongoDB driver.
      client ??= import('mongodb')
        .then(({ MongoClient }) => new MongoClient(config.mongoUrl!).connect())
        .catch((err: unknown) => {
          // Connected again at the next lease asked for, not failed for good.
          client = null;
          throw err;
        });
      return MongoLease.on(await client, config.mongoUrl!, name);
    },
    close: async () => {
      await (await client?.catch(() => null))?.close();
    },
  };
}

/**
 * With a shared read store (MongoDB) only the holder of the projection lease runs the projectors;
 * other projector processes stand by. The lease is in NATS KV when NATS is configured, else a
 * document in the read store's database.
 */
export async function keepProjectionLease(
  config: Config,
  nats: NatsConnection | null,
  runner: ProjectionRunner,
  onError: (err: unknown) => void,
  /** One lease per build (its projector versions): each build's holder keeps its own versions. */
  name = 'read-models',
): Promise<{ keeper: LeaseKeeper; close: () => Promise<void> }> {
  let lease: Lease;
  let closeLease = async () => {};
  if (nats) {
    const { NatsLease } = await import('../projections/lease-nats.js');
    lease = await NatsLease.open(nats, name);
  } else {
    const { MongoLease } = await import('../projections/lease-mongo.js');
    const l = await MongoLease.connect(config.mongoUrl!, name);
    lease = l;
    closeLease = () => l.close();
  }
  const keeper = new LeaseKeeper(lease, runner, {
    onError,
    onChange: (held) => console.log(held ? 'projection lease taken: projecting' : 'projection lease lost: standing by'),
  });
  await keeper.start();
  return {
    keeper,
    close: async () => {
      await keeper.stop();
      await closeLease();
    },
  };
}

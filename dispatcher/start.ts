import path from 'node:path';
import { mkdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Config } from '../api/config.js';
import type { Services } from '../api/services.js';
import type { Runtime } from '../api/wiring.js';
import { SqliteEventLog } from '../commands/eventlog/sqlite.js';
import { type DeliveryLog, SqliteDeliveryLog, StoreDeliveryLog } from './deliveries.js';
import { Dispatcher } from './dispatcher.js';
import type { DeliveryQueue } from './queue/port.js';
import { SqliteDeliveryQueue } from './queue/sqlite.js';
import { shareFileWith } from './queue/sqlite-batch.js';
import { Sender } from './send.js';
import type { Lookup } from './ssrf.js';
import { startWorker } from './worker.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { type LeasedWork, LeaseKeeper } from '../projections/lease.js';

/**
 * The embedded SQLite database for webhook state: the event log's own file when the log is
 * embedded, else `webhooks.sqlite` in the data directory.
 */
function embeddedDb(services: Services): Database.Database {
  const cached = services.extras.webhookDb as Database.Database | undefined;
  if (cached) return cached;
  let db: Database.Database;
  const log = services.log;
  if (log instanceof SqliteEventLog) {
    db = log.database;
    shareFileWith(db, () => log.writerIdle());
  } else {
    const dir = services.config.dataDir;
    if (dir !== ':memory:') mkdirSync(dir, { recursive: true });
    db = new Database(dir === ':memory:' ? ':memory:' : path.join(dir, 'webhooks.sqlite'));
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
  }
  services.extras.webhookDb = db;
  return db;
}

/**
 * Where attempts are logged: in the shared read store (MongoDB) when there is one, so every API
 * process sees them; else in the embedded SQLite file, which survives restarts.
 */
export function deliveryLogFor(services: Services): DeliveryLog {
  let d = services.extras.webhookDeliveries as DeliveryLog | undefined;
  if (!d) {
    d = services.config.mongoUrl ? new StoreDeliveryLog(services.store) : new SqliteDeliveryLog(embeddedDb(services));
    services.extras.webhookDeliveries = d;
  }
  return d;
}

async function openQueue(config: Config, services: Services): Promise<DeliveryQueue> {
  if (config.natsUrl) {
    const { NatsDeliveryQueue } = await import('./queue/nats.js');
    return NatsDeliveryQueue.connect(config.natsUrl);
  }
  return new SqliteDeliveryQueue(embeddedDb(services));
}

export interface DispatcherHandle {
  /** The log follower, while this process runs it (always, unless a shared queue's lease is elsewhere). */
  readonly dispatcher: Dispatcher | null;
  stop(): Promise<void>;
}

/** The log follower as restartable work: a fresh Dispatcher, resuming from the queue's checkpoint, each time. */
class FollowLog implements LeasedWork {
  current: Dispatcher | null = null;
  constructor(private readonly make: () => Dispatcher) {}
  async start(): Promise<void> {
    const d = this.make();
    await d.start();
    this.current = d;
  }
  async stop(): Promise<void> {
    const d = this.current;
    this.current = null;
    await d?.stop();
  }
}

/** Starts the dispatcher (log → queue) and the delivery workers (queue → receivers). */
export async function startDispatcher(
  config: Config,
  runtime: Pick<Runtime, 'services' | 'onClose'>,
  options: { lookup?: Lookup; concurrency?: number; report?: (m: string) => void } = {},
): Promise<DispatcherHandle> {
  const { services } = runtime;
  const queue = await openQueue(config, services);
  const deliveries = deliveryLogFor(services);
  const report = options.report ?? ((m: string) => console.warn(m));
  const follow = new FollowLog(
    () =>
      new Dispatcher({
        log: services.log,
        store: services.store,
        queue,
        deliveries,
        settle: services.settle,
        onError: (err) => report(`webhook dispatcher: ${err instanceof Error ? err.message : String(err)}`),
      }),
  );
  // With a shared queue several dispatcher processes run. Delivery workers run in all of them,
  // but only the holder of a lease follows the log and enqueues: a dispatcher far behind the
  // others could otherwise enqueue a task again once the queue's duplicate window has passed.
  const nats = services.extras.nats as NatsConnection | undefined;
  let keeper: LeaseKeeper | null = null;
  if (config.natsUrl && nats) {
    const { NatsLease } = await import('../projections/lease-nats.js');
    keeper = new LeaseKeeper(await NatsLease.open(nats, 'webhook-dispatcher'), follow, {
      onError: (err) => report(`webhook dispatcher lease: ${err instanceof Error ? err.message : String(err)}`),
    });
    await keeper.start();
  } else await follow.start();
  const sender = new Sender({ timeoutMs: config.webhook.timeoutMs, allowInsecure: config.webhook.allowInsecure, lookup: options.lookup });
  const worker = startWorker({ log: services.log, queue, deliveries, sender, policy: config.webhook, report }, options.concurrency ?? 64);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await (keeper ? keeper.stop() : follow.stop());
    await worker.stop();
    sender.close();
    await queue.close();
  };
  runtime.onClose(stop);
  return {
    get dispatcher() {
      return follow.current;
    },
    stop,
  };
}

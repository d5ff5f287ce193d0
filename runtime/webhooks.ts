import path from 'node:path';
import Database from 'better-sqlite3';
import { privateFile, secureDataDir } from './private-files.js';
import type { Config } from './config.js';
import type { Runtime } from './services.js';
import type { EventLog } from '../eventlog/port.js';
import { SqliteEventLog } from '../eventlog/sqlite.js';
import { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DeliveryQueue } from '../dispatcher/queue/port.js';
import { SqliteDeliveryQueue } from '../dispatcher/queue/sqlite.js';
import { shareFileWith } from '../dispatcher/queue/sqlite-batch.js';
import { Sender } from '../dispatcher/send.js';
import type { Lookup } from '../dispatcher/ssrf.js';
import { startWorker } from '../dispatcher/worker.js';
import { MemoryThrottle } from '../dispatcher/throttle.js';
import { disableEndpoint } from '../commands/webhook-endpoints.js';
import { type LeasedWork, LeaseKeeper } from '../projections/lease.js';

/**
 * The embedded SQLite database for webhook state: the event log's own file when the log is
 * embedded, else `webhooks.sqlite` in the data directory. The log's file keeps the delivery queue,
 * its checkpoint and the delivery log where existing data directories have them, in the one file
 * to back up; the dispatcher's bookkeeping there waits (without blocking the event loop) for the
 * log's writer thread to hold no batch, so neither waits for the other's write lock. Only this
 * composition root knows the log is SQLite: the dispatcher is given the file and a wait.
 */
export function openWebhookDb(config: Config, log: EventLog): Database.Database {
  if (log instanceof SqliteEventLog) {
    const db = log.database;
    shareFileWith(db, () => log.writerIdle());
    return db;
  }
  const dir = config.dataDir;
  const file = dir === ':memory:' ? ':memory:' : path.join(dir, 'webhooks.sqlite');
  if (dir !== ':memory:') {
    secureDataDir(dir);
    privateFile(file, { sqlite: true });
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  return db;
}

async function openQueue(config: Config, runtime: Pick<Runtime, 'webhookDb'>): Promise<DeliveryQueue> {
  if (config.natsUrl) {
    const { NatsDeliveryQueue } = await import('../dispatcher/queue/nats.js');
    return NatsDeliveryQueue.connect(config.natsUrl);
  }
  if (!runtime.webhookDb) throw new Error('the embedded delivery queue needs an embedded webhook database');
  return new SqliteDeliveryQueue(runtime.webhookDb);
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
  runtime: Pick<Runtime, 'services' | 'onClose' | 'nats' | 'webhookDb' | 'watchFollower'>,
  options: { lookup?: Lookup; concurrency?: number; report?: (m: string) => void } = {},
): Promise<DispatcherHandle> {
  const { services } = runtime;
  const queue = await openQueue(config, runtime);
  const deliveries = services.deliveries;
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
        report,
      }),
  );
  // With a shared queue several dispatcher processes run. Delivery workers run in all of them,
  // but only the holder of a lease follows the log and enqueues: a dispatcher far behind the
  // others could otherwise enqueue a task again once the queue's duplicate window has passed.
  const nats = runtime.nats;
  let keeper: LeaseKeeper | null = null;
  if (config.natsUrl && nats) {
    const { NatsLease } = await import('../projections/lease-nats.js');
    keeper = new LeaseKeeper(await NatsLease.open(nats, 'webhook-dispatcher'), follow, {
      onError: (err) => report(`webhook dispatcher lease: ${err instanceof Error ? err.message : String(err)}`),
    });
    await keeper.start();
  } else await follow.start();
  const sender = new Sender({ timeoutMs: config.webhook.timeoutMs, allowInsecure: config.webhook.allowInsecure, lookup: options.lookup });
  // Readiness: the log follower, while this process runs it.
  runtime.watchFollower(async () => follow.current?.status() ?? (keeper ? null : { name: 'webhook-dispatcher', state: 'catching_up', behind: null }));
  // Several dispatcher processes share one NATS: the throttle must count every worker's sends.
  const throttle = config.natsUrl && nats ? await (await import('./throttle-nats.js')).NatsThrottle.open(nats) : new MemoryThrottle();
  const worker = startWorker(
    {
      log: services.log,
      queue,
      deliveries,
      sender,
      policy: config.webhook,
      report,
      throttle,
      disable: { endpoint: (target, reason) => disableEndpoint(services, target, reason), afterMs: config.webhookDisableAfterHours * 3_600_000 },
    },
    options.concurrency ?? 64,
  );
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

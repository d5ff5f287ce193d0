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
import { Sender } from './send.js';
import type { Lookup } from './ssrf.js';
import { startWorker } from './worker.js';

/**
 * The embedded SQLite database for webhook state: the event log's own file when the log is
 * embedded, else `webhooks.sqlite` in the data directory.
 */
function embeddedDb(services: Services): Database.Database {
  const cached = services.extras.webhookDb as Database.Database | undefined;
  if (cached) return cached;
  let db: Database.Database;
  if (services.log instanceof SqliteEventLog) db = services.log.database;
  else {
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
  dispatcher: Dispatcher;
  stop(): Promise<void>;
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
  const dispatcher = new Dispatcher({
    log: services.log,
    store: services.store,
    queue,
    deliveries,
    settle: services.settle,
    onError: (err) => report(`webhook dispatcher: ${err instanceof Error ? err.message : String(err)}`),
  });
  await dispatcher.start();
  const sender = new Sender({ timeoutMs: config.webhook.timeoutMs, allowInsecure: config.webhook.allowInsecure, lookup: options.lookup });
  const worker = startWorker({ log: services.log, queue, deliveries, sender, policy: config.webhook, report }, options.concurrency ?? 64);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await dispatcher.stop();
    await worker.stop();
    sender.close();
    await queue.close();
  };
  runtime.onClose(stop);
  return { dispatcher, stop };
}

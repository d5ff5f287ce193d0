import path from 'node:path';
import Database from 'better-sqlite3';
import { privateFile, secureDataDir } from './private-files.js';
import type { Config } from './config.js';
import type { Runtime } from './services.js';
import type { EventLog } from '../eventlog/port.js';
import { Dispatcher } from '../dispatcher/dispatcher.js';
import type { DeliveryQueue } from '../dispatcher/queue/port.js';
import { SqliteDeliveryQueue } from '../dispatcher/queue/sqlite.js';
import { shareFileWith } from '../dispatcher/queue/sqlite-batch.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { Sender, type WebhookSender } from '../dispatcher/send.js';
import { ThreadSender } from './sender-thread.js';
import type { Lookup } from '../dispatcher/ssrf.js';
import { startWorker } from '../dispatcher/worker.js';
import { SqliteDeliveryLog, StoreDeliveryLog } from '../dispatcher/deliveries.js';
import { type OperationsDeps, WebhookOperations } from '../dispatcher/operations.js';
import { ReplayRunner } from '../dispatcher/replay-runner.js';
import { SqliteReplayStore, StoreReplayStore } from '../dispatcher/replays.js';
import type { ReadStore } from '../projections/store/port.js';
import { MemoryThrottle, type Throttle } from '../dispatcher/throttle.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { disableEndpoint } from '../commands/webhook-endpoints.js';
import { type LeasedWork, LeaseKeeper } from '../projections/lease.js';
import { onceUntilFailed } from '../eventlog/once.js';
import type { Sealer } from '../eventlog/sealing.js';
import { unopenableSecrets } from '../dispatcher/secrets.js';

/** The webhook tables an older data directory keeps in the event log's file (moveWebhookTables). */
const WEBHOOK_TABLES = ['webhook_tasks', 'webhook_checkpoints', 'webhook_deliveries', 'webhook_replays'];

/**
 * The embedded SQLite database for webhook state: `webhooks.sqlite` in the data directory (the
 * delivery queue and its checkpoint, the delivery log, the replays), whatever the event log is.
 * Its commits never wait for the log's: in the log's file the dispatcher's bookkeeping would wait
 * for the log's writer thread to let go of the lock, and the log would hold its next batch for it
 * (the webhook latency's tail). A data directory from
 * before keeps those tables in the log's file: they are moved here at the first start.
 *
 * Opened at synchronous=NORMAL (SqliteBatcher: delivery is at least once, so a power cut's last
 * commits are replayed, never lost) and checkpointed on a thread of its own (WalCheckpointer),
 * closed through `onClose` after everything that uses it.
 */
/** `logDatabase`: the embedded log's own database, where a data directory from before kept the webhook tables; null for another log. */
export function openWebhookDb(config: Config, logDatabase: Database.Database | null, onClose: (fn: () => Promise<void> | void) => void): Database.Database {
  const dir = config.dataDir;
  const file = dir === ':memory:' ? ':memory:' : path.join(dir, 'webhooks.sqlite');
  if (dir !== ':memory:') {
    secureDataDir(dir);
    privateFile(file, { sqlite: true });
  }
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  // Queued bodies purged by an erasure leave no old bytes in free space (decisions.md §17).
  db.pragma('secure_delete = ON');
  if (logDatabase) moveWebhookTables(logDatabase, db);
  db.pragma('synchronous = NORMAL');
  if (file === ':memory:') {
    onClose(() => void db.close());
    return db;
  }
  const checkpointer = new WalCheckpointer(db);
  shareFileWith(db, () => checkpointer.idle(), () => checkpointer.committed());
  onClose(async () => {
    await checkpointer.close();
    db.close();
  });
  return db;
}

/**
 * Moves the webhook tables of a data directory from before webhooks.sqlite out of the log's file
 * (`from`) into `to`: copied whole in one durable transaction (copyTables), then dropped from the
 * log's file. Once `to` has them it is the one that counts: a start stopped between the two steps
 * drops the leftovers next time, and copies nothing twice.
 */
export function moveWebhookTables(from: Database.Database, to: Database.Database): void {
  const inLog = tableNames(from);
  const old = WEBHOOK_TABLES.filter((t) => inLog.has(t));
  if (!old.length) return;
  const present = tableNames(to);
  if (!WEBHOOK_TABLES.some((t) => present.has(t))) copyTables(from.name, to, old);
  from.transaction(() => {
    for (const table of old) from.exec(`DROP TABLE ${table}`);
  })();
}

const tableNames = (db: Database.Database, schema = 'main') =>
  new Set(db.prepare(`SELECT name FROM ${schema}.sqlite_master WHERE type = 'table'`).pluck().all() as string[]);

/** `tables` of the database file `file` into `to` (empty of them): schema, rows and AUTOINCREMENT counters, at synchronous=FULL. */
function copyTables(file: string, to: Database.Database, tables: string[]): void {
  to.prepare('ATTACH DATABASE ? AS old').run(file);
  try {
    to.pragma('synchronous = FULL');
    to.transaction(() => {
      const ddl = to.prepare<[string]>("SELECT sql FROM old.sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY type = 'index'").pluck();
      for (const table of tables) {
        for (const sql of ddl.all(table) as string[]) to.exec(sql);
        to.exec(`INSERT INTO main.${table} SELECT * FROM old.${table}`);
      }
      // webhook_deliveries' AUTOINCREMENT goes on from where it was, pruned rows included (the
      // rows inserted above set it only as far as the highest one kept).
      if (!tableNames(to, 'old').has('sqlite_sequence') || !tableNames(to).has('sqlite_sequence')) return;
      const names = JSON.stringify(tables);
      to.prepare('DELETE FROM main.sqlite_sequence WHERE name IN (SELECT value FROM json_each(?))').run(names);
      to.prepare('INSERT INTO main.sqlite_sequence (name, seq) SELECT name, seq FROM old.sqlite_sequence WHERE name IN (SELECT value FROM json_each(?))').run(names);
    })();
  } finally {
    to.exec('DETACH DATABASE old');
  }
}

async function openQueue(config: Config, webhookDb: Database.Database | null): Promise<DeliveryQueue> {
  if (config.natsUrl) {
    const { NatsDeliveryQueue } = await import('../dispatcher/queue/nats.js');
    return NatsDeliveryQueue.connect(config.natsUrl);
  }
  if (!webhookDb) throw new Error('the embedded delivery queue needs an embedded webhook database');
  return new SqliteDeliveryQueue(webhookDb);
}

/**
 * The webhook state a process reads and writes besides the log: the delivery log and the replay
 * jobs (in the embedded webhook database, else the shared read store, so every API process sees
 * them), the delivery queue (opened on first use, one per process: the API enqueues resends on it,
 * the dispatcher consumes it) and the operations of decisions.md §12. `onClose` is told how to
 * close what was opened.
 */
export function openWebhookState(
  config: Config,
  store: ReadStore,
  webhookDb: Database.Database | null,
  log: EventLog,
  mainSealer: Sealer,
  onClose: (fn: () => Promise<void> | void) => void,
  nats: NatsConnection | null = null,
  /** The auto-disable a test ping answered 410 Gone asks (commands/webhook-endpoints.ts disableEndpoint). */
  disable?: OperationsDeps['disable'],
) {
  const retention = { retentionDays: config.deliveryLogDays };
  const deliveries = webhookDb ? new SqliteDeliveryLog(webhookDb, retention) : new StoreDeliveryLog(store, retention);
  const replays = webhookDb ? new SqliteReplayStore(webhookDb) : new StoreReplayStore(store);
  let queue: Promise<DeliveryQueue> | null = null;
  let sender: Sender | null = null;
  onClose(async () => {
    sender?.close();
    await queue?.then((q) => q.close(), () => undefined);
  });
  // Opened at the first use; a failure (NATS away at that moment) is tried again at the next.
  const webhookQueue = onceUntilFailed(() => (queue = openQueue(config, webhookDb)));
  // One throttle for the worker's attempts and the test pings (decisions.md §12: never more than
  // maxPerSecond requests to an endpoint in any second). Several dispatcher processes share one
  // NATS: there the throttle counts every process's sends, the API processes' pings included.
  const webhookThrottle = onceUntilFailed(
    async (): Promise<Throttle> => (config.natsUrl && nats ? (await import('./throttle-nats.js')).NatsThrottle.open(nats) : new MemoryThrottle()),
  );
  const webhooks = new WebhookOperations({
    log,
    deliveries,
    replays,
    queue: webhookQueue,
    throttle: webhookThrottle,
    ...(disable ? { disable } : {}),
    mainSealer,
    sender: () => (sender ??= new Sender({ timeoutMs: config.webhook.timeoutMs, allowInsecure: config.webhook.allowInsecure })),
  });
  // Read at scrape time (decisions.md §15): a process that never opened the queue reports no depth.
  const queueDepth = async () => (queue ? (await queue).depth() : null);
  return { deliveries, replays, webhookQueue, webhookThrottle, webhooks, queueDepth };
}

export interface DispatcherHandle {
  /** The log follower, while this process runs it (always, unless a shared queue's lease is elsewhere). */
  readonly dispatcher: Dispatcher | null;
  stop(): Promise<void>;
}

/** The log follower as restartable work: a fresh Dispatcher, resuming from the queue's checkpoint, each time. */
class FollowLog implements LeasedWork {
  current: Dispatcher | null = null;
  private replays: ReplayRunner | null = null;
  constructor(
    private readonly make: () => Dispatcher,
    private readonly makeReplays: () => ReplayRunner,
  ) {}
  async start(): Promise<void> {
    const d = this.make();
    await d.start();
    this.current = d;
    // Replays run beside the log follower: one process at a time queues them.
    this.replays = this.makeReplays();
    this.replays.start();
  }
  async stop(): Promise<void> {
    const [d, r] = [this.current, this.replays];
    [this.current, this.replays] = [null, null];
    await r?.stop();
    await d?.stop();
  }
}

/**
 * Attempts at a time sent from the main thread before the rest go to the sender thread: enough
 * for a steady trickle (500 writes/s keeps one or two in flight), few against a burst's 64.
 */
const SENT_HERE = 4;

/** Starts the dispatcher (log → queue) and the delivery workers (queue → receivers). */
export async function startDispatcher(
  config: Config,
  runtime: Pick<Runtime, 'services' | 'onClose' | 'nats' | 'watchFollower'>,
  options: { lookup?: Lookup; concurrency?: number; report?: (m: string) => void } = {},
): Promise<DispatcherHandle> {
  const { services } = runtime;
  const queue = await services.webhookQueue();
  const { deliveries, replays } = services;
  const report = options.report ?? ((m: string) => console.warn(m));
  // Said once at the start, before any attempt: a process given another main key than the one
  // that sealed the secrets sends nothing to those endpoints (each attempt says so again).
  const unopenable = await unopenableSecrets(services.store, services.mainSealer);
  if (unopenable.length)
    report(
      `MAIN KEY MISMATCH: this process's main key does not open the signing secrets of webhook endpoint(s) ${unopenable.join(', ')}; ` +
        'deliveries to them are not sent until every process runs with the TURNOUT_MAIN_KEY (or <dataDir>/main-key) that sealed them, ' +
        'or the secrets are rotated (docs/production.md)',
    );
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
    () => new ReplayRunner({ log: services.log, queue, deliveries, replays, feed: services.feedTable ?? services.feedModel, report }),
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
  // The deliveries' sender: a few attempts at a time here, the rest on a thread of its own (a
  // lookup given for tests keeps it all here: a function cannot cross threads).
  const senderOptions = { timeoutMs: config.webhook.timeoutMs, allowInsecure: config.webhook.allowInsecure };
  let sender: WebhookSender;
  if (options.lookup) sender = new Sender({ ...senderOptions, lookup: options.lookup });
  else {
    const threaded = new ThreadSender(senderOptions, { here: new Sender(senderOptions), hereUpTo: SENT_HERE });
    // Started now, not awaited: /readyz waits for the role to start, and a trickle goes from here
    // anyway; attempts handed to the thread before it is loaded wait for it, their time-outs
    // counted from when it takes them.
    void threaded.ready();
    sender = threaded;
  }
  // Readiness: the log follower, while this process runs it.
  // While the queue or the lease store is out of reach the dispatcher is reconnecting, whatever
  // else it was: the API still answers, webhooks wait (decisions.md §1, degraded).
  runtime.watchFollower(async () => {
    if (queue.reachable?.() === false || keeper?.storeUnreachable) return { name: 'webhook-dispatcher', state: 'reconnecting', behind: null };
    return follow.current?.status() ?? (keeper ? null : { name: 'webhook-dispatcher', state: 'catching_up', behind: null });
  });
  // The process's one throttle, which its test pings ask too (openWebhookState).
  const throttle = await services.webhookThrottle();
  const settled = (replay: string, taskId: string, delivered: boolean) => replays.settled(replay, taskId, delivered);
  const worker = startWorker(
    {
      log: services.log,
      queue,
      deliveries,
      sender,
      mainSealer: services.mainSealer,
      policy: config.webhook,
      report,
      settled,
      throttle,
      disable: { endpoint: (target, reason, sentTo) => disableEndpoint(services, target, reason, sentTo), afterMs: config.webhookDisableAfterHours * 3_600_000 },
      ...(services.metrics ? { observe: services.metrics.delivered.bind(services.metrics) } : {}),
      ...(services.tracing ? { trace: services.tracing } : {}),
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
  };
  runtime.onClose(stop);
  return {
    get dispatcher() {
      return follow.current;
    },
    stop,
  };
}

import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { FollowerStatus } from '../eventlog/follower.js';
import type { EventLog } from '../eventlog/port.js';
import type { Position } from '../domain/shared/events.js';
import { SqliteEventLog } from '../eventlog/sqlite.js';
import { IdAllocator } from '../commands/ids.js';
import { disableEndpoint } from '../commands/webhook-endpoints.js';
import { StartCatchUp } from '../projections/engine/catch-up.js';
import { waitForCheckpoint } from '../projections/engine/checkpoint-wait.js';
import { ProjectionRunner } from '../projections/engine/main-thread.js';
import { VersionOwnership } from '../projections/engine/ownership.js';
import { defineReadModels } from '../projections/engine/step.js';
import { buildOf, registerReadModels, summaryOf } from '../projections/engine/builds.js';
import type { ProjectorThread } from '../projections/engine/thread.js';
import { projectors } from '../projections/index.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { ApiKeyMark } from '../projections/api-key-mark.js';
import { SqliteReadStore } from '../projections/store/sqlite.js';
import type { ReadStore } from '../projections/store/port.js';
import type { Config } from './config.js';
import { lockDataDir } from './datadir-lock.js';
import { privateFile, secureDataDir } from './private-files.js';
import { FallbackRateLimiter } from './ratelimit-fallback.js';
import { watchTeamFeed } from './team-feed.js';
import { keepProjectionLease, openLimiter, openNats, readSettler, readsSettleToHead, versionLeases } from './scale.js';
import type { Runtime, Services } from './services.js';
import { openWebhookDb, openWebhookState } from './webhooks.js';
import { InFlightRedaction } from './idempotency/in-flight.js';
import { SqliteIdempotencyStore } from './idempotency/sqlite.js';
import { type CatchUpProgress, LOG_FILE, READ_MODELS_FILE, startProjectorThread } from './read-models.js';
import { readModelTopology } from './topology.js';
import { adoptPrepared } from './prepared.js';
import { removeRebuildLeftovers } from './rebuild-files.js';
import { projectorVersions } from './thread-projectors.js';
import { FeedTable } from '../dispatcher/feed-table.js';
import { FeedModel } from '../dispatcher/feed-model.js';
import { storeProjectors } from './store-models.js';
import { endpointUrlCheck } from '../dispatcher/ssrf.js';
import { instrumentAppend, traceSettle } from './instrument.js';
import { Metrics } from './metrics.js';
import { startTracing } from './tracing-start.js';
import { Sealer } from '../eventlog/sealing.js';
import { loadMainKey } from './main-key.js';
import { Erasure } from './erasure.js';
import { type KeyStore, SqliteKeyStore } from '../eventlog/keys.js';
import { SealingEventLog } from '../eventlog/sealed-log.js';

export type { Runtime };

/**
 * The log the configuration names, and, for the embedded one, its SQLite database: where a data
 * directory from before webhooks.sqlite kept the webhook tables (openWebhookDb moves them).
 */
async function openLog(config: Config, mainSealer: Sealer, benchLog: BenchLog): Promise<{ log: EventLog; database: Database.Database | null }> {
  if (benchLog === 'sealed') {
    const { log, database } = await openLog(config, mainSealer, 'port');
    return { log: new SealingEventLog(log, await openKeyStore(config, mainSealer)), database };
  }
  if (config.eventStoreUrl) {
    const { EsdbEventLog } = await import('../eventlog/esdb.js');
    // EventStoreDB cannot rewrite events: personal fields are sealed per constituent, erasure destroys the key (decisions.md §17).
    return { log: new SealingEventLog(await EsdbEventLog.connect(config.eventStoreUrl), await openKeyStore(config, mainSealer)), database: null };
  }
  if (config.dataDir === ':memory:') return embedded(new SqliteEventLog(':memory:'));
  secureDataDir(config.dataDir);
  const file = path.join(config.dataDir, LOG_FILE);
  privateFile(file, { sqlite: true });
  return embedded(new SqliteEventLog(file));
}

const embedded = (log: SqliteEventLog) => ({ log, database: log.database });

/**
 * A bench switch (bench/sealing.ts), not a setting of the product: `TURNOUT_BENCH_LOG=port` has
 * the embedded data dir's log used through the log port only, as EventStoreDB's is (read models
 * in this process's memory kept by the main-thread projector, the change feed built from the log
 * at each read), and `sealed` the same through the sealing layer with `keys.sqlite` (decisions.md
 * §17's production design), so that the cost of sealing is measured on the whole HTTP path. The
 * projector thread reads the log's file itself, so it does not run then.
 */
type BenchLog = 'port' | 'sealed' | null;

/**
 * A second bench switch, beside TURNOUT_BENCH_LOG only: `TURNOUT_BENCH_FEED=log` serves the change
 * feed built from the log at each read, as before the feed's read model, so that the bench prints
 * both (bench/sealing.ts). The read model is kept all the same, so writes cost the same.
 */
function feedFromLogOf(env: NodeJS.ProcessEnv, benchLog: BenchLog): boolean {
  const v = env.TURNOUT_BENCH_FEED?.trim();
  if (!v) return false;
  if (v !== 'log' || !benchLog) throw new Error(`TURNOUT_BENCH_FEED is log, beside TURNOUT_BENCH_LOG (a bench switch), not ${JSON.stringify(v)}`);
  return true;
}

function benchLogOf(env: NodeJS.ProcessEnv, config: Config): BenchLog {
  const v = env.TURNOUT_BENCH_LOG?.trim();
  if (!v) return null;
  if (v !== 'port' && v !== 'sealed') throw new Error(`TURNOUT_BENCH_LOG is port or sealed (a bench switch), not ${JSON.stringify(v)}`);
  if (config.eventStoreUrl || config.mongoUrl) throw new Error('TURNOUT_BENCH_LOG is a switch of the embedded stores only');
  return v;
}

/** The per-constituent data keys: a MongoDB collection beside the read models, else a file in the data dir. */
async function openKeyStore(config: Config, mainSealer: Sealer): Promise<KeyStore> {
  if (config.mongoUrl) {
    const [{ MongoKeyStore }, { dbNameOf }] = await Promise.all([import('../eventlog/keys-mongo.js'), import('../projections/store/mongo.js')]);
    return MongoKeyStore.connect(config.mongoUrl, dbNameOf(config.mongoUrl), mainSealer);
  }
  if (config.dataDir === ':memory:') return new SqliteKeyStore(':memory:', mainSealer);
  secureDataDir(config.dataDir);
  const file = path.join(config.dataDir, 'keys.sqlite');
  privateFile(file, { sqlite: true });
  return new SqliteKeyStore(file, mainSealer);
}

async function openStore(config: Config): Promise<ReadStore> {
  if (config.mongoUrl) {
    const { MongoReadStore } = await import('../projections/store/mongo.js');
    return MongoReadStore.connect(config.mongoUrl);
  }
  // Read models rebuilt at every start (an in-memory log, or EventStoreDB without MongoDB).
  return new SqliteReadStore(':memory:');
}

/**
 * Starts the projector thread on the data dir's read database and opens this thread's reading
 * connection to it, once the thread has laid it out.
 */
async function openReadModelsThread(
  config: Config,
  log: EventLog,
  report: (m: string) => void,
  onProgress?: (progress: CatchUpProgress) => void,
): Promise<{ thread: ProjectorThread; store: ReadStore; keyMark: ApiKeyMark | null }> {
  const countAfter = (p: Position) => log.countAfter?.(p) ?? Promise.resolve(0);
  // Exact only while this process's threads alone write the read models: with NATS, other
  // processes share the data dir, and the key check goes by the store's change mark instead.
  const keyMark = config.natsUrl ? null : new ApiKeyMark();
  const files = { logFile: path.join(config.dataDir, LOG_FILE), readFile: path.join(config.dataDir, READ_MODELS_FILE), ...(keyMark ? { keyMark: keyMark.buffer } : {}) };
  privateFile(files.readFile, { sqlite: true });
  const thread = await startProjectorThread(files, countAfter, { report, onProgress });
  // The log's writer thread tells the projector thread each commit as soon as it is durable: the
  // thread applies it while the writer commits the next ones.
  await thread.attachLog(log);
  return { thread, store: new SqliteReadStore(new SqliteReadCore(files.readFile, { laidOutElsewhere: true })), keyMark };
}

/**
 * Opens the stores the configuration names and starts the parts of this process's role. The
 * embedded default (no URLs) runs everything in one process.
 *
 * With `follow: false` the projectors do not start following the log until `startFollowing()`:
 * the server opens its port first, so that /healthz answers at once and /readyz says how far the
 * read models are behind while they catch up.
 */
export async function openRuntime(
  config: Config,
  hooks: {
    onProjectionError?: (err: unknown) => void;
    report?: (message: string) => void;
    /** Told every few seconds while the embedded read models catch up or rebuild (events done, rate, time left). */
    onReadModelProgress?: (progress: CatchUpProgress) => void;
    /** False: the read models start following the log only when startFollowing() is called (the server opens its port first). */
    follow?: boolean;
    /** False: no Prometheus families (the cost bench's baseline); on by default. */
    metrics?: boolean;
    /** The environment tracing is configured from (the standard OTEL_* variables); process.env by default. */
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<Runtime> {
  const report = hooks.report ?? ((m: string) => console.warn(m));
  const closers: Array<() => Promise<void> | void> = [];
  const benchLog = benchLogOf(hooks.env ?? process.env, config);
  const feedFromLog = feedFromLogOf(hooks.env ?? process.env, benchLog);
  const topology = benchLog ? 'in-process' : readModelTopology(config);
  // Without a shared queue (NATS), two processes on one data dir would both dispatch every webhook.
  if (!config.natsUrl && config.dataDir !== ':memory:') {
    const lock = lockDataDir(config.dataDir);
    closers.push(() => lock.release());
    // Read models a `turnout rebuild --prepare` built for this release replace the live ones before
    // anything opens them; only a process that holds the data dir alone may move them.
    if (topology === 'file-thread') {
      removeRebuildLeftovers(config.dataDir, report);
      adoptPrepared(config.dataDir, await projectorVersions(), report);
    }
  }
  // Spans still buffered are sent after everything else has closed.
  const tracing = await startTracing(hooks.env);
  if (tracing) closers.push(() => tracing.close());
  // The main key (decisions.md §17): seals webhook secrets and what must not lie in plaintext at rest.
  const mainSealer = new Sealer(loadMainKey(config.dataDir, hooks.env ?? process.env).key);
  const { log, database: logDatabase } = await openLog(config, mainSealer, benchLog);
  closers.push(() => log.close());
  // The projector thread stops before the reading connection closes, and before the log.
  const inFile = topology === 'file-thread' ? await openReadModelsThread(config, log, report, hooks.onReadModelProgress) : null;
  // The change feed reads the table the projector thread keeps, settled to the log's head first.
  const feedTable = inFile ? new FeedTable(path.join(config.dataDir, READ_MODELS_FILE), async () => settle(await log.head())) : undefined;
  if (feedTable) closers.push(() => feedTable.close());
  const rawStore = inFile?.store ?? (await openStore(config));
  closers.push(() => rawStore.close());
  // Elsewhere the read store keeps the change feed too, a read model like the others (versioned,
  // registered, built by the lease holder), so that no feed read opens a sealed event.
  const models = inFile ? projectors : storeProjectors(log);
  const feedModel = inFile ? undefined : new FeedModel(rawStore, async () => settle(await log.head()));
  if (inFile) closers.push(() => inFile.thread.stop());
  const nats = await openNats(config);
  if (nats) closers.push(() => nats.drain());

  // Read models rebuilt at start are per process, so every process that reads keeps its own
  // projector; with a shared store only the projector role writes, and only the lease holder.
  // In the embedded file, the projector thread writes (one per process, each applying what no
  // other has: projections/engine/sqlite-step.ts).
  // On a store several builds share, each build keeps (and waits on) its own versions' summary.
  const shared = topology === 'leased' || topology === 'reader';
  const summary = shared ? summaryOf(models) : 'read-models';
  // Where several builds may share the store, each version is written by the one process that
  // holds its lease, whichever build it belongs to (projections/engine/ownership.ts).
  const leases = topology === 'leased' ? versionLeases(config, nats) : null;
  if (leases) closers.push(() => leases.close());
  const ownership = leases ? new VersionOwnership(models, leases.leaseOf, { onError: (err) => console.error('read-model version lease', err), report }) : undefined;
  const runner = topology === 'in-process' || topology === 'leased' ? new ProjectionRunner(log, rawStore, models, { onError: hooks.onProjectionError, report, summary, ownership }) : null;
  // Registered before its collections are laid out, so that `turnout rebuild --drop-unused`, which
  // lists the collections before it reads the registrations, never takes a starting build's new
  // collections for unused ones (projections/store/mongo-versions.ts).
  if (shared) {
    const registration = await registerReadModels(rawStore, models, `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, report);
    closers.push(() => registration.stop());
  }
  await defineReadModels(rawStore, models);
  let leased: Awaited<ReturnType<typeof keepProjectionLease>> | null = null;
  // Reads wait for the catch-up after start only where this process's own projector writes the
  // read models it serves; a shared store is kept up by the lease holder, wherever it runs.
  const catchUp = new StartCatchUp();
  closers.push(() => catchUp.stop());
  const followers: Array<() => Promise<FollowerStatus | null>> = [];
  // The change feed's projection on EventStoreDB, checked by the processes that project.
  const keepTeamFeed = async () => {
    const watched = await watchTeamFeed(log, report);
    if (!watched) return;
    closers.push(() => watched.stop());
    followers.push(async () => watched.status());
  };
  let following: Promise<void> | null = null;
  let markFollowing!: () => void;
  const followingBegun = new Promise<void>((resolve) => (markFollowing = resolve));
  const startFollowing = () =>
    (following ??= (async () => {
      markFollowing();
      if (runner && topology === 'leased') {
        await keepTeamFeed();
        leased = await keepProjectionLease(config, nats, runner, (err) => console.error('projection lease', err), `read-models-${buildOf(models)}`);
        closers.push(() => leased!.close());
        void catchUp.followShared(log, rawStore, summary);
      } else if (runner) {
        await keepTeamFeed();
        await runner.start();
        closers.push(() => runner.stop());
        void catchUp.follow(log, (p) => runner.waitFor(p));
      } else if (inFile) {
        // The projector thread follows the log from its start; reads wait until it has caught up.
        void catchUp.follow(log, (p) => inFile.thread.waitFor(p));
      } else {
        // Another process keeps this build's versions: ready once they reach the log's head at start.
        void catchUp.followShared(log, rawStore, summary);
      }
    })());
  if (hooks.follow !== false) await startFollowing();
  let starting = hooks.follow === false;

  // A shared store is written by whichever process holds the lease: wait on its checkpoint.
  // The driver's own promise, not an async function's around it: every write waits here, and an
  // async wrapper returning a promise costs a promise and three turns of the microtask queue more.
  const settleHere = (position: Position | null): Promise<void> => {
    if (!position) return Promise.resolve();
    if (inFile) return inFile.thread.waitFor(position);
    if (runner && topology === 'in-process') return runner.waitFor(position);
    return waitForCheckpoint(rawStore, position, summary);
  };
  const settle = traceSettle(settleHere, tracing);
  const settleReads = runner && readsSettleToHead(config) ? readSettler(log, (p) => runner.waitFor(p)) : undefined;

  const limiter = await openLimiter(config, nats);
  if (limiter?.close) closers.push(() => limiter.close!());
  // Delivery attempts are logged in the shared read store (MongoDB) when there is one, so every
  // API process sees them; else in an embedded SQLite file, which survives restarts.
  const webhookDb = config.mongoUrl ? null : openWebhookDb(config, logDatabase, (fn) => closers.push(fn));
  // A ping's auto-disable writes through the command deps made below (called only once serving).
  const webhookState = openWebhookState(config, rawStore, webhookDb, log, mainSealer, (fn) => closers.push(fn), nats, (target, reason, sentTo) =>
    disableEndpoint(commandDeps, target, reason, sentTo),
  );

  const idempotency = new InFlightRedaction(
    config.mongoUrl ? await (await import('./idempotency/mongo.js')).MongoIdempotencyStore.connect(config.mongoUrl) : SqliteIdempotencyStore.open(config.dataDir),
  );
  closers.push(() => idempotency.close());

  // Readiness asks every follower this process runs; a standby (the lease is elsewhere) runs none.
  // Elsewhere the shared read models are another process's: caught up once this build's versions
  // reached the log's head at start (a new version is built from the log meanwhile).
  if (runner) followers.push(async () => (leased && !leased.keeper.held ? catchUp.status() : runner.status()));
  else if (shared) followers.push(async () => catchUp.status());
  if (inFile) followers.push(() => inFile.thread.status());
  if (limiter instanceof FallbackRateLimiter) followers.push(async () => limiter.status());

  const followerStatus = async () => (await Promise.all(followers.map((status) => status()))).filter((f): f is FollowerStatus => f !== null);
  const metrics =
    hooks.metrics === false
      ? null
      : new Metrics({ followers: followerStatus, queueDepth: webhookState.queueDepth, dataDir: config.dataDir === ':memory:' ? null : config.dataDir });
  instrumentAppend(log, metrics);

  const keyMark = inFile?.keyMark;
  const commandDeps = { log, store: rawStore, ids: new IdAllocator(log), settle, ...(keyMark ? { keyMark: () => keyMark.read() } : {}), checkWebhookUrl: endpointUrlCheck({ allowInsecure: config.webhook.allowInsecure }), mainSealer };
  const erasure = new Erasure({
    deps: commandDeps,
    dataDir: config.dataDir,
    mainSealer,
    feedTable,
    feedModel,
    // Only a shared store keeps other versions' collections (MongoDB); the data dir's file has none.
    readModels: inFile ? undefined : { store: rawStore, collections: models.flatMap((p) => p.collections) },
    webhookDb,
    // The embedded queue's bodies are purged in its file (webhookDb); a NATS queue's cannot be.
    ...(config.natsUrl ? { queue: webhookState.webhookQueue } : {}),
    idempotency,
    readModelsFile: inFile ? path.join(config.dataDir, READ_MODELS_FILE) : null,
    report,
    retry: config.erasureRetry,
  });
  closers.push(() => erasure.close());
  followers.push(async () => erasure.status());
  // An erasure a previous run began is finished once the read models have caught up (they apply its event first).
  void (async () => {
    await followingBegun;
    await following;
    await (catchUp.pending() ?? Promise.resolve());
    await erasure.resume();
  })().catch((err) => report(`erasure: could not finish an erasure begun before: ${String(err)}`));

  const services: Services = {
    ...commandDeps,
    erasure,
    settleReads,
    feedTable,
    feedModel: feedFromLog ? undefined : feedModel,
    readsCaughtUp: () => catchUp.pending(),
    starting: () => starting,
    config,
    limiter,
    ...webhookState,
    idempotency,
    reachable: async () => {
      const failure = log.failure?.();
      if (failure) throw failure;
      await log.head();
      await rawStore.getCheckpoint('read-models');
    },
    followers: followerStatus,
    metrics,
    tracing,
  };
  return {
    services,
    runner,
    readModels: inFile?.thread ?? null,
    nats,
    webhookDb,
    onClose: (fn) => closers.push(fn),
    watchFollower: (status) => followers.push(status),
    startFollowing,
    readModelsCaughtUp: () => catchUp.pending() ?? Promise.resolve(),
    started: () => {
      starting = false;
    },
    close: async () => {
      for (const c of closers.reverse()) await c();
    },
  };
}

import path from 'node:path';
import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { type CatchUpProgress, ProgressMeter } from '../projections/engine/progress.js';
import type { Projector } from '../projections/engine/projector.js';
import { type LogReader, SqliteProjection } from '../projections/engine/sqlite-step.js';
import { checkpointName } from '../projections/engine/step.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { quoteId } from '../projections/store/sqlite-schema.js';
import { lockDataDir } from './datadir-lock.js';
import { privateFile } from './private-files.js';
import { Flusher, rebuildFiles, removeDatabase, replaceDatabase, syncPath } from './rebuild-files.js';
import { chunkSender, type RelayedChunk, RelayedLog } from './rebuild-relay.js';
import { FreshFileStore } from './rebuild-store.js';
import { type ThreadTimeline, Timeline, threadCpuMs } from './rebuild-timeline.js';
import { LOG_FILE, READ_MODELS_FILE } from './read-models.js';
import { loadProjectors, startModuleThread } from './thread-projectors.js';

/**
 * The bytes of the log's stored columns (UTF-8, in shared memory: rebuild-events.ts ChunkText) the
 * first thread may have handed the second beyond what that one has applied.
 */
const HANDED_AHEAD_BYTES = 256 * 1024 * 1024;

export interface RebuildOptions {
  onProgress?: (progress: CatchUpProgress) => void;
  progressEveryMs?: number;
  /**
   * Called as the rebuild begins its end (the indexes, the second thread's tables copied in, the
   * file synced and moved into place: long single SQLite statements on this thread, seconds at a
   * million records) with what it does; the answer is called after it. The CLI keeps printing
   * meanwhile from a thread of its own, as for a prepare's.
   */
  whileSilent?: (what: string) => () => void;
  /** A module exporting the projectors to rebuild (tests); the product's by default. */
  projectorsModule?: string;
  /** Build the `independent` projectors on a second thread (the default), or everything on this one. */
  threads?: 1 | 2;
}


/** What the second thread is given (rebuild-lane.ts). */
export interface LaneSettings {
  logFile: string;
  file: string;
  projectorsModule?: string;
  /** The projectors it builds, by name. */
  names: string[];
  /** Where the first thread's chunks come (rebuild-relay.ts chunkReceiver), and the bell it rings after each. */
  chunks: MessagePort;
  bell: Int32Array;
}

/** What the search indexes' thread is given (rebuild-search.ts): the file it reads, the file it writes, the searches. */
export interface SearchApartSettings {
  from: string;
  file: string;
  searches: Array<{ table: string; fts: string; column: string }>;
}

/** What the search indexes' thread says at its end, with its CPU and wall time. */
export type FromSearchApart = { type: 'done'; cpuMs: number | null; ms: number; timeline: ThreadTimeline } | { type: 'failed'; message: string };

/** What the second thread says: the events it has read, then that it is done, with its CPU time (or why not). */
export type FromLane = { type: 'read'; events: number } | { type: 'done'; events: number; position: string; cpuMs: number | null; ms: number; timeline: ThreadTimeline } | { type: 'failed'; message: string };

/** What a rebuild answers: the events read, the time taken, and where it went (the bench shows it). */
export interface RebuildResult {
  events: number;
  ms: number;
  /**
   * Each thread's CPU time (null where the system does not tell a thread's own) and its wall
   * time: `here` builds what is not `independent`, then copies in what `apart` built and the
   * search indexes `search` built of its rows (at the end, beside its other indexes). On two free
   * cores the rebuild takes about as long as its busier thread's CPU time; on a busy machine the
   * wall time says more about the machine than about the rebuild.
   */
  threads: Array<{ name: 'here' | 'apart' | 'search'; cpuMs: number | null; ms: number; timeline: ThreadTimeline }>;
}

/**
 * Builds every read model of an embedded data dir (and the change feed's table) again from the log,
 * offline (the `turnout rebuild` command, the scale benchmark): refuses a data dir a running
 * server holds. Answers the events read and the time taken.
 *
 * It builds a new file beside the live one and moves it into place only once it is whole, so a
 * rebuild that fails or is killed leaves the read models as they were. The new file is written
 * without a WAL or syncs (nobody reads it meanwhile) and synced once at the end.
 *
 * The projectors marked `independent` (the activity log, the change feed: a row per event, read by
 * no other projector) are built meanwhile by a second thread into a file of their own, from the
 * chunks of the log this one reads (rebuild-relay.ts), and copied in at the end: SQLite's copy of a whole table into an
 * empty one moves its pages as they are, far faster than projecting them again.
 */
export async function rebuildReadModels(dataDir: string, options: RebuildOptions = {}): Promise<RebuildResult> {
  const lock = lockDataDir(dataDir);
  const started = performance.now();
  const cpuAtStart = threadCpuMs();
  const timeline = new Timeline();
  timeline.begin('start');
  const live = path.join(dataDir, READ_MODELS_FILE);
  const files = rebuildFiles(live);
  const [building, apartFile, searchFile] = files;
  const logFile = path.join(dataDir, LOG_FILE);
  let log: ReturnType<typeof openLogReader> | null = null;
  let core: SqliteReadCore | null = null;
  /** Stops what whileSilent started (the CLI's heartbeat). */
  let silent: (() => void) | null = null;
  let lane: Lane | null = null;
  let relay: RelayedLog | null = null;
  try {
    log = openLogReader(logFile);
    for (const file of files) removeDatabase(file);
    privateFile(building, { sqlite: true });
    core = new SqliteReadCore(building, { fresh: true });
    const all = await loadProjectors(options.projectorsModule, { db: core.db, log, bulk: true });
    const apart = (options.threads ?? 2) > 1 ? all.filter((p) => p.independent) : [];
    const here = all.filter((p) => !apart.includes(p));
    // Every read model laid out at its version: those built apart get their rows copied in.
    new SqliteProjection(core, all, log).prepare();

    const head = Number(log.head());
    const meter = new ProgressMeter(head, options.progressEveryMs ?? 5_000);
    let told = 0;
    const readHere = { events: 0 };
    const tell = () => {
      // Each thread applies the whole log: the rebuild is as far as the slower of the two.
      const done = Math.min(readHere.events, lane?.events ?? Infinity);
      if (done <= told) return;
      const progress = meter.add(done - told, head - done);
      told = done;
      if (progress) options.onProgress?.(progress);
    };
    let pace: (() => Promise<void>) | undefined;
    if (apart.length) {
      privateFile(apartFile, { sqlite: true });
      const other = startLane({ logFile, file: apartFile, projectorsModule: options.projectorsModule, names: apart.map((p) => p.name) }, tell);
      // The other thread is handed each chunk this one reads (the log read once). This one runs
      // ahead as far as the memory cap lets it, so that its end's work (indexes, the search
      // thread) runs beside the other's last chunks instead of after them.
      const handing = new RelayedLog(logFile, other.send);
      pace = () => {
        const needed = handing.neededFor(HANDED_AHEAD_BYTES, other.events);
        return needed ? timeline.wait('relay back-pressure', other.reached(needed)) : Promise.resolve();
      };
      lane = other;
      relay = handing;
    }
    // A failure of the other thread is told once this one is done or waits for it.
    const flusher = new Flusher(building);
    let events: number;
    let apartTimes: RebuildResult['threads'] = [];
    try {
      const onRead = (read: number) => {
        readHere.events = read;
        tell();
        flusher.kick();
      };
      // With a second thread, this one's read models stay in bulk mode once caught up: a third
      // builds their search indexes from the rows meanwhile, as this one builds their other
      // indexes and copies in the second's tables, the end's work otherwise this thread's alone.
      timeline.begin('log');
      ({ events } = await buildLane(core, here, relay ?? log, onRead, { beforeStep: pace, keepBulk: lane !== null, timeline }));
      silent = options.whileSilent?.('the indexes, then the read models moved into place') ?? null;
      if (lane) {
        const hereCollections = here.flatMap((p) => p.collections.map((c) => c.name));
        const searches = hereCollections.flatMap((name) => core!.plan(name).searches.map((s) => ({ table: core!.plan(name).table, fts: s.fts, column: s.column })));
        privateFile(searchFile, { sqlite: true });
        const indexing = searchesApart({ from: building, file: searchFile, searches });
        // That thread reads the rows meanwhile: this one's commit waits for its read, however long.
        core.db.pragma('busy_timeout = 600000');
        try {
          timeline.begin('indexes');
          core.endBulk(hereCollections, { offline: true, searchesBuilt: true });
          // Each stretch of the end's writes goes to the disk while the next runs or this thread
          // waits, not all in the last sync (syncPath below) on the rebuild's critical path.
          flusher.flushWritten();
          timeline.begin('waiting for apart');
          const { position, cpuMs, ms, timeline: apartTimeline } = await lane.done;
          apartTimes = [{ name: 'apart', cpuMs, ms, timeline: apartTimeline }];
          timeline.begin('copy apart in');
          copyIn(core, apartFile, apart, position);
          flusher.flushWritten();
          timeline.begin('waiting for search');
          const searched = await indexing.done;
          apartTimes.push({ name: 'search', ...searched });
        } finally {
          await indexing.stop();
        }
        timeline.begin('adopt search');
        core.adoptSearchIndexes(hereCollections, searchFile);
      }
      options.onProgress?.(meter.now(0));
    } finally {
      await flusher.close();
    }
    if (relay) timeline.note('MB of the log handed ahead at most', relay.mostHeld / 1e6);
    timeline.begin('finish');
    core.finishFresh();
    core = null;
    syncPath(building);
    replaceDatabase(building, live);
    silent?.();
    silent = null;
    const ms = performance.now() - started;
    const cpuNow = threadCpuMs();
    const hereTimes = { name: 'here' as const, cpuMs: cpuAtStart === null || cpuNow === null ? null : cpuNow - cpuAtStart, ms, timeline: timeline.done() };
    return { events, ms, threads: [hereTimes, ...apartTimes] };
  } finally {
    silent?.();
    if (lane) await lane.stop();
    relay?.close();
    core?.close();
    log?.close();
    for (const file of files) removeDatabase(file);
    lock.release();
  }
}

/**
 * Applies every event of the log to `projectors` into `core`'s file, chunk by chunk, in bulk mode
 * however short the log (search and list indexes built once at the end, nothing left waiting for a
 * search table's sync); then each projector's endBulk. Tells the events read after each chunk.
 * `keepBulk`: the read models' bulk mode is left on at the end, for the caller to end.
 */
export async function buildLane(
  core: SqliteReadCore,
  projectors: Projector[],
  log: LogReader,
  onRead: (events: number) => void,
  options: { beforeStep?: () => Promise<void>; keepBulk?: boolean; timeline?: Timeline } = {},
): Promise<{ events: number; position: bigint }> {
  const { beforeStep, keepBulk = false, timeline } = options;
  // Projectors that are all `independent` look nothing up: no keys need keeping for them.
  const store = projectors.every((p) => p.independent) ? undefined : new FreshFileStore(core);
  const projection = new SqliteProjection(core, projectors, log, { bulk: true, store, keepBulk });
  projection.prepare();
  let events = 0;
  for (;;) {
    await beforeStep?.();
    const step = await projection.step();
    events += step.read;
    onRead(events);
    if (step.caughtUp) {
      timeline?.begin('projectors end');
      core.transaction(() => {
        for (const p of projectors) p.endBulk?.();
      });
      return { events, position: step.position };
    }
    // A chunk's awaits are microtasks only: this lets the other thread's messages in between.
    await new Promise(setImmediate);
  }
}

interface Lane {
  /** Events the thread has applied so far. */
  events: number;
  /** Hands the thread a chunk of the log. */
  send(chunk: RelayedChunk): void;
  /** Resolves once the thread has applied `events` events. */
  reached(events: number): Promise<void>;
  /** The position its projectors reached (the end of the log), with the thread's CPU and wall time. */
  done: Promise<{ position: bigint; cpuMs: number | null; ms: number; timeline: ThreadTimeline }>;
  stop(): Promise<void>;
}

function startLane(given: Omit<LaneSettings, 'chunks' | 'bell'>, onRead: () => void): Lane {
  const { port1, port2 } = new MessageChannel();
  const bell = new Int32Array(new SharedArrayBuffer(4));
  const settings: LaneSettings = { ...given, chunks: port2, bell };
  const worker: Worker = startModuleThread(import.meta.url, 'rebuild-lane', { workerData: settings, name: 'turnout-rebuild', transferList: [port2] });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let waiting: { below: number; resolve: () => void } | null = null;
  const lane: Lane = {
    events: 0,
    send: chunkSender(port1, bell),
    reached: (events) => {
      if (lane.events >= events) return Promise.resolve();
      // A thread that fails or exits is told by `done`, which the caller awaits after: not waited on forever.
      return Promise.race([new Promise<void>((resolve) => (waiting = { below: events, resolve })), lane.done.then(() => {})]);
    },
    done: new Promise((resolve, reject) => {
      worker.on('message', (m: FromLane) => {
        if (m.type === 'failed') reject(new Error(`rebuild of ${settings.names.join(', ')}: ${m.message}`));
        else {
          lane.events = m.events;
          if (waiting && lane.events >= waiting.below) {
            waiting.resolve();
            waiting = null;
          }
          onRead();
          if (m.type === 'done') resolve({ position: BigInt(m.position), cpuMs: m.cpuMs, ms: m.ms, timeline: m.timeline });
        }
      });
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the rebuild thread of ${settings.names.join(', ')} exited (code ${code}) before it was done`)));
    }),
    stop: async () => {
      await worker.terminate();
      await exited;
      port1.close();
    },
  };
  lane.done.catch(() => {});
  return lane;
}

/** The thread that builds the search indexes of the new file's rows (rebuild-search.ts). */
function searchesApart(settings: SearchApartSettings): { done: Promise<{ cpuMs: number | null; ms: number; timeline: ThreadTimeline }>; stop(): Promise<void> } {
  const worker: Worker = startModuleThread(import.meta.url, 'rebuild-search', { workerData: settings, name: 'turnout-rebuild-search' });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const done = new Promise<{ cpuMs: number | null; ms: number; timeline: ThreadTimeline }>((resolve, reject) => {
    worker.once('message', (m: FromSearchApart) => (m.type === 'done' ? resolve(m) : reject(new Error(`the rebuild's search indexes: ${m.message}`))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the rebuild's search index thread exited (code ${code}) before it was done`)));
  });
  done.catch(() => {});
  return {
    done,
    stop: async () => {
      await worker.terminate();
      await exited;
    },
  };
}

/**
 * Copies what the second thread built into the new file: each collection's rows (its list and
 * search indexes then built once, as after a bulk load) and each table of its own, whole, with the
 * projectors' checkpoints at the position that thread reached.
 */
function copyIn(core: SqliteReadCore, file: string, projectors: Projector[], position: bigint): void {
  core.db.prepare('ATTACH DATABASE ? AS apart').run(file);
  try {
    const collections = projectors.flatMap((p) => p.collections.map((c) => c.name));
    core.transaction(() => {
      if (collections.length) core.beginBulk(collections, { offline: true });
      for (const name of collections) copyTable(core, core.plan(name).table);
      for (const p of projectors) for (const t of p.tables ?? []) copyTable(core, quoteId(t));
      for (const p of projectors) core.setCheckpoint(checkpointName(p), { commit: position, prepare: position });
      if (collections.length) core.endBulk(collections, { offline: true });
    });
  } finally {
    core.db.exec('DETACH DATABASE apart');
  }
}

/** Same layout on both sides, so SQLite moves the pages as they are (its transfer of a whole table into an empty one). */
function copyTable(core: SqliteReadCore, table: string): void {
  core.db.exec(`INSERT INTO main.${table} SELECT * FROM apart.${table}`);
}


import type Database from 'better-sqlite3';
import type { ReadStore } from '../projections/store/port.js';
import { and, eq } from '../projections/store/port.js';
import { onceUntilFailed } from '../eventlog/once.js';
import { batcherFor } from './queue/sqlite-batch.js';

/**
 * A replay (decisions.md §12): a background job that queues a range of a team's envelopes for one
 * endpoint. Its state is durable, so a restart resumes it where it stood: `next` is the feed cursor
 * after the last envelope queued. `sent` and `failed` count its tasks that have finished (delivered,
 * or given up), so `queued - sent - failed` is how many it has outstanding.
 */
export type ReplayStatus = 'running' | 'done' | 'failed';

export interface Replay {
  id: string;
  team: number;
  endpointId: number;
  /** The range as asked (date-times or cursors; without `to`, a cursor at the log's end then) and the type filter, read again on resume. */
  from: string;
  to: string | null;
  types: string[] | null;
  status: ReplayStatus;
  queued: number;
  sent: number;
  failed: number;
  /** The encoded feed cursor after the last envelope queued. */
  next: string;
  /** True once every envelope in range has been queued. */
  exhausted: boolean;
  error: string | null;
  createdAt: string;
}

/** What the job itself writes; `sent` and `failed` are the workers' (settled). */
export type ReplayProgress = Pick<Replay, 'id' | 'status' | 'queued' | 'next' | 'exhausted' | 'error'>;

export interface ReplayStore {
  create(replay: Replay): Promise<void>;
  get(id: string): Promise<Replay | null>;
  /** Jobs still running, oldest first (a dispatcher resumes them). */
  running(): Promise<Replay[]>;
  save(progress: ReplayProgress): Promise<void>;
  /** A replay task finished (`delivered` or given up); counted once per task id where the store can tell. */
  settled(replay: string, taskId: string, delivered: boolean): Promise<void>;
}

interface ReplayRow {
  doc: string;
  sent: number | bigint;
  failed: number | bigint;
}

/** Embedded: a table beside the delivery queue, in the same file. */
export class SqliteReplayStore implements ReplayStore {
  private readonly stmt;

  constructor(private readonly db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_replays (
        id TEXT PRIMARY KEY, status TEXT NOT NULL, doc TEXT NOT NULL, sent INTEGER NOT NULL DEFAULT 0, failed INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS webhook_replays_status ON webhook_replays (status);
    `);
    this.stmt = {
      insert: db.prepare('INSERT INTO webhook_replays (id, status, doc) VALUES (?, ?, ?)'),
      get: db.prepare<[string], ReplayRow>('SELECT doc, sent, failed FROM webhook_replays WHERE id = ?'),
      running: db.prepare<[], ReplayRow>("SELECT doc, sent, failed FROM webhook_replays WHERE status = 'running' ORDER BY rowid"),
      save: db.prepare('UPDATE webhook_replays SET status = ?, doc = ? WHERE id = ?'),
      sent: db.prepare('UPDATE webhook_replays SET sent = sent + 1 WHERE id = ?'),
      failed: db.prepare('UPDATE webhook_replays SET failed = failed + 1 WHERE id = ?'),
    };
  }

  private read(r: ReplayRow): Replay {
    return { ...(JSON.parse(r.doc) as Replay), sent: Number(r.sent), failed: Number(r.failed) };
  }

  async create(replay: Replay): Promise<void> {
    await batcherFor(this.db).run(() => this.stmt.insert.run(replay.id, replay.status, JSON.stringify(replay)));
  }

  async get(id: string): Promise<Replay | null> {
    const r = this.stmt.get.get(id);
    return r ? this.read(r) : null;
  }

  async running(): Promise<Replay[]> {
    return this.stmt.running.all().map((r) => this.read(r));
  }

  async save(progress: ReplayProgress): Promise<void> {
    const current = await this.get(progress.id);
    if (!current) return;
    await batcherFor(this.db).run(() => this.stmt.save.run(progress.status, JSON.stringify({ ...current, ...progress }), progress.id));
  }

  // A task finishes once (the queue deletes it in the same batch), so a counter is enough here.
  async settled(replay: string, _taskId: string, delivered: boolean): Promise<void> {
    await batcherFor(this.db).run(() => (delivered ? this.stmt.sent : this.stmt.failed).run(replay));
  }
}

export const WEBHOOK_REPLAYS = 'webhookReplays';
export const WEBHOOK_REPLAY_OUTCOMES = 'webhookReplayOutcomes';

/**
 * Production: collections of the shared read store (MongoDB). Workers in several processes settle
 * tasks, so each outcome is its own document (inserted once per task id: a redelivered task is not
 * counted twice) and the counts are counts of those.
 */
export class StoreReplayStore implements ReplayStore {
  /** The collections, defined at the first use; tried again after a failure. */
  private readonly ready: () => Promise<void>;

  constructor(private readonly store: ReadStore) {
    this.ready = onceUntilFailed(async () => {
      await store.defineCollection({ name: WEBHOOK_REPLAYS, idField: 'id', indexes: [['status']] });
      await store.defineCollection({
        name: WEBHOOK_REPLAY_OUTCOMES,
        idField: 'id',
        indexes: [['replay', 'delivered']],
        expireAfter: { field: '_at', seconds: 30 * 86_400 },
      });
    });
  }

  private async counted(r: Replay): Promise<Replay> {
    const count = async (delivered: boolean) =>
      (await this.store.find({ collection: WEBHOOK_REPLAY_OUTCOMES, filter: and(eq('replay', r.id), eq('delivered', delivered)), page: { page: 1, pageSize: 1 } })).total;
    const [sent, failed] = await Promise.all([count(true), count(false)]);
    return { ...r, sent, failed };
  }

  async create(replay: Replay): Promise<void> {
    await this.ready();
    await this.store.put(WEBHOOK_REPLAYS, { ...replay });
  }

  async get(id: string): Promise<Replay | null> {
    await this.ready();
    const r = await this.store.get<Replay>(WEBHOOK_REPLAYS, id);
    return r ? this.counted(r) : null;
  }

  async running(): Promise<Replay[]> {
    await this.ready();
    const r = await this.store.find<Replay>({ collection: WEBHOOK_REPLAYS, filter: eq('status', 'running'), sort: [{ field: 'createdAt', dir: 'asc' }], page: { page: 1, pageSize: 100 } });
    return Promise.all(r.items.map((x) => this.counted(x)));
  }

  async save(progress: ReplayProgress): Promise<void> {
    await this.ready();
    await this.store.updateWhere(WEBHOOK_REPLAYS, eq('id', progress.id), { ...progress });
  }

  async settled(replay: string, taskId: string, delivered: boolean): Promise<void> {
    await this.ready();
    await this.store.insertIfAbsent(WEBHOOK_REPLAY_OUTCOMES, { id: taskId, replay, delivered, _at: new Date() });
  }
}

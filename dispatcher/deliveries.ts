import type Database from 'better-sqlite3';
import type { ReadStore } from '../projections/store/port.js';
import { and, eq, gte } from '../projections/store/port.js';
import { onceUntilFailed } from '../eventlog/once.js';
import { batcherFor } from './queue/sqlite-batch.js';

/**
 * The delivery log (decisions.md 9): one row per attempt, its id being the attempt's
 * X-Turnout-Delivery. A row is `pending` until attempted, then `succeeded`, `failed` (another
 * attempt follows at nextAttemptAt) or `abandoned` (the last attempt failed).
 */
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'abandoned';
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'abandoned'];

export interface Delivery {
  id: string;
  endpointId: number;
  eventId: string;
  eventType: string;
  attempt: number;
  status: DeliveryStatus;
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  attemptedAt: string | null;
  nextAttemptAt: string | null;
}

export interface DeliveryLog {
  /** Inserts or replaces rows by id. */
  record(rows: Delivery[]): Promise<void>;
  /** Inserts `pending` rows for first attempts, never over a row already there. */
  recordPending(rows: Delivery[]): Promise<void>;
  /** An endpoint's attempts, newest first. */
  list(endpointId: number, status: DeliveryStatus | undefined, page: { page: number; pageSize: number }): Promise<{ items: Delivery[]; total: number }>;
  /** One attempt by its id, if it is this endpoint's. */
  get(endpointId: number, id: string): Promise<Delivery | null>;
  /** Attempts made from `since` (unix ms), counted per hour (unix ms of the hour's start). */
  hourly(endpointId: number, since: number): Promise<HourCount[]>;
  /**
   * When the endpoint's unbroken run of failed attempts began: the first failed (or abandoned)
   * attempt logged after its last success, and at or after `from` (ISO) where given (an endpoint
   * enabled again: failures before its disable are not its run); null when none failed since.
   * Auto-disable (decisions.md 12).
   */
  failingSince(endpointId: number, from?: string): Promise<string | null>;
}

export interface HourCount {
  hour: number;
  succeeded: number;
  failed: number;
}

const HOUR_MS = 3_600_000;

/**
 * How an attempt that sent nothing begins its error (dispatcher/worker.ts: a signing secret the
 * main key does not open, a body that could not be checked against erasures): the operator's to
 * fix, not the receiver's, so not a failure that counts toward disabling the endpoint.
 */
export const NOT_SENT = 'not sent: ';
const sentNothing = (d: Pick<Delivery, 'error'>) => d.error?.startsWith(NOT_SENT) === true;

/** An attempt that got no 2xx counts as failed, whether another follows (`failed`) or not (`abandoned`). */
const succeeded = (status: DeliveryStatus) => status === 'succeeded';

/** The earlier of two attempt times (ISO strings compare in time order). */
const earliest = (a: string | null | undefined, b: string | null | undefined) => (a && b ? (a < b ? a : b) : (a ?? b ?? null));

const publicRow = ({ endpointId: _e, ...rest }: Delivery) => rest;
export { publicRow as deliveryView };

export interface RetentionOptions {
  /** Rows are kept this many days after their last write (TURNOUT_DELIVERY_LOG_DAYS). */
  retentionDays?: number;
  /** The clock, for tests. */
  now?: () => number;
}

const DAY_MS = 86_400_000;
/** How often the embedded log looks for expired rows, and how many it deletes in one transaction. */
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_BATCH = 5_000;

/**
 * Embedded: a table in the webhook database (webhooks.sqlite), so the log survives restarts. Expired rows
 * are pruned by the writes themselves (at most every ten minutes, a bounded batch each time), so
 * no timer has to be stopped, and a log nobody writes to does not grow.
 */
export class SqliteDeliveryLog implements DeliveryLog {
  private readonly stmt;
  private readonly retentionMs: number;
  private readonly now: () => number;
  private prunedAt = -Infinity;

  constructor(
    private readonly db: Database.Database,
    options: RetentionOptions = {},
  ) {
    this.retentionMs = (options.retentionDays ?? 30) * DAY_MS;
    this.now = options.now ?? Date.now;
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, endpoint_id INTEGER NOT NULL, doc TEXT NOT NULL, status TEXT NOT NULL
      );
    `);
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('webhook_deliveries')").all();
    // Rows written before retention existed count as written now: they expire a full period later.
    if (!columns.some((c) => c.name === 'recorded_at'))
      db.exec(`ALTER TABLE webhook_deliveries ADD COLUMN recorded_at INTEGER NOT NULL DEFAULT ${Math.floor(this.now())}`);
    // One index per listing (with and without a status), each in the listing's order, so a page
    // is read straight off the index; and one for pruning by age.
    db.exec(`
      DROP INDEX IF EXISTS webhook_deliveries_endpoint;
      CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_seq ON webhook_deliveries (endpoint_id, seq);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_status_seq ON webhook_deliveries (endpoint_id, status, seq);
      CREATE INDEX IF NOT EXISTS webhook_deliveries_recorded ON webhook_deliveries (recorded_at);
    `);
    // The hourly stats count attempts by when they were made (unix ms; null while pending).
    if (!columns.some((c) => c.name === 'attempted_at'))
      db.exec(`
        ALTER TABLE webhook_deliveries ADD COLUMN attempted_at INTEGER;
        UPDATE webhook_deliveries SET attempted_at = CAST((julianday(json_extract(doc, '$.attemptedAt')) - 2440587.5) * 86400000 AS INTEGER)
          WHERE json_extract(doc, '$.attemptedAt') IS NOT NULL;
      `);
    db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_attempted ON webhook_deliveries (endpoint_id, attempted_at)');
    // A run of failures is told by when attempts were made, not by when their rows were written.
    db.exec('CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint_status_attempted ON webhook_deliveries (endpoint_id, status, attempted_at)');
    this.stmt = {
      upsert: db.prepare(
        'INSERT INTO webhook_deliveries (id, endpoint_id, doc, status, recorded_at, attempted_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, status = excluded.status, recorded_at = excluded.recorded_at, attempted_at = excluded.attempted_at',
      ),
      insertNew: db.prepare('INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, doc, status, recorded_at) VALUES (?, ?, ?, ?, ?)'),
      page: db.prepare<[number, number, number], { doc: string }>('SELECT doc FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?'),
      pageByStatus: db.prepare<[number, string, number, number], { doc: string }>(
        'SELECT doc FROM webhook_deliveries WHERE endpoint_id = ? AND status = ? ORDER BY seq DESC LIMIT ? OFFSET ?',
      ),
      count: db.prepare<[number], { n: number | bigint }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ?'),
      countByStatus: db.prepare<[number, string], { n: number | bigint }>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND status = ?'),
      one: db.prepare<[string, number], { doc: string }>('SELECT doc FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?'),
      // Integer division by a literal: a bound JavaScript number would be a REAL and keep the fraction.
      hourly: db.prepare<[number, number], { hour: number | bigint; succeeded: number | bigint; failed: number | bigint }>(
        `SELECT attempted_at / ${HOUR_MS} AS hour, SUM(status = 'succeeded') AS succeeded, SUM(status <> 'succeeded') AS failed
           FROM webhook_deliveries WHERE endpoint_id = ? AND attempted_at >= ? GROUP BY hour`,
      ),
      lastSucceeded: db.prepare<[number], { at: number | bigint }>(
        "SELECT attempted_at AS at FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'succeeded' AND attempted_at IS NOT NULL ORDER BY attempted_at DESC LIMIT 1",
      ),
      firstWithStatusAfter: db.prepare<[number, string, number], { at: string | null }>(
        // Off the (endpoint, status, attempted_at) index; an attempt that sent nothing does not start a run of failures.
        `SELECT json_extract(doc, '$.attemptedAt') AS at FROM webhook_deliveries WHERE endpoint_id = ? AND status = ? AND attempted_at > ? AND coalesce(json_extract(doc, '$.error'), '') NOT LIKE '${NOT_SENT}%' ORDER BY attempted_at LIMIT 1`,
      ),
      prune: db.prepare<[number, number]>(
        'DELETE FROM webhook_deliveries WHERE seq IN (SELECT seq FROM webhook_deliveries WHERE recorded_at < ? LIMIT ?)',
      ),
    };
  }

  /** Answers the group commit's own promise, so the queue can finish the task in the same commit (SqliteBatcher.run's `after`). */
  record(rows: Delivery[]): Promise<void> {
    if (!rows.length) return Promise.resolve();
    const at = Math.floor(this.now());
    return batcherFor(this.db).run(() => {
      for (const r of rows) this.stmt.upsert.run(r.id, r.endpointId, JSON.stringify(r), r.status, at, r.attemptedAt === null ? null : Date.parse(r.attemptedAt));
      this.pruneIfDue(at);
    });
  }

  async recordPending(rows: Delivery[]): Promise<void> {
    if (!rows.length) return;
    const at = Math.floor(this.now());
    await batcherFor(this.db).run(() => {
      for (const r of rows) this.stmt.insertNew.run(r.id, r.endpointId, JSON.stringify(r), r.status, at);
    });
  }

  async list(endpointId: number, status: DeliveryStatus | undefined, page: { page: number; pageSize: number }) {
    const offset = (page.page - 1) * page.pageSize;
    const rows = status ? this.stmt.pageByStatus.all(endpointId, status, page.pageSize, offset) : this.stmt.page.all(endpointId, page.pageSize, offset);
    const count = status ? this.stmt.countByStatus.get(endpointId, status) : this.stmt.count.get(endpointId);
    return { items: rows.map((r) => JSON.parse(r.doc) as Delivery), total: Number(count!.n) };
  }

  async get(endpointId: number, id: string): Promise<Delivery | null> {
    const r = this.stmt.one.get(id, endpointId);
    return r ? (JSON.parse(r.doc) as Delivery) : null;
  }

  async hourly(endpointId: number, since: number): Promise<HourCount[]> {
    return this.stmt.hourly
      .all(endpointId, since)
      .map((r) => ({ hour: Number(r.hour) * HOUR_MS, succeeded: Number(r.succeeded), failed: Number(r.failed) }));
  }

  async failingSince(endpointId: number, from?: string): Promise<string | null> {
    // One index seek per status (endpoint, status, seq), however long the run of failures.
    // By when the attempts were made: a row is written when its attempt is queued (a retry's when
    // the attempt before it failed), so a success can have an earlier row than failures before it.
    const after = Math.max(Number(this.stmt.lastSucceeded.get(endpointId)?.at ?? -1), from === undefined ? -1 : Date.parse(from) - 1);
    const first = (status: DeliveryStatus) => this.stmt.firstWithStatusAfter.get(endpointId, status, after)?.at;
    return earliest(first('failed'), first('abandoned'));
  }

  /** Deletes rows last written before the retention period; runs inside a write's transaction. */
  private pruneIfDue(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    const deleted = this.stmt.prune.run(now - this.retentionMs, PRUNE_BATCH).changes;
    // A full batch may leave more behind: look again on the next write.
    if (deleted < PRUNE_BATCH) this.prunedAt = now;
  }
}

export const WEBHOOK_DELIVERIES = 'webhookDeliveries';

/**
 * Production: a collection of the shared read store (MongoDB), visible to every API process.
 * Listings are served by the indexes (endpointId, _seq) and (endpointId, status, _seq); rows expire
 * through the collection's `expireAfter` on `_recordedAt` (a TTL index on MongoDB).
 */
export class StoreDeliveryLog implements DeliveryLog {
  private seq = 0;
  /**
   * Orders rows newest first across processes: time-based, so a process started earlier does
   * not number later attempts below a newer process's, and strictly increasing within one.
   */
  private nextSeq(): number {
    this.seq = Math.max(this.seq + 1, Date.now() * 1000);
    return this.seq;
  }
  /** The collection and its indexes, defined at the first use; tried again after a failure. */
  private readonly ready: () => Promise<void>;
  private readonly now: () => number;
  constructor(
    private readonly store: ReadStore,
    options: RetentionOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.ready = onceUntilFailed(() => store.defineCollection({
      name: WEBHOOK_DELIVERIES,
      idField: 'id',
      indexes: [
        ['endpointId', '_seq'],
        ['endpointId', 'status', '_seq'],
        ['endpointId', 'attemptedAt'],
        ['endpointId', 'status', 'attemptedAt'],
      ],
      expireAfter: { field: '_recordedAt', seconds: Math.round((options.retentionDays ?? 30) * 86_400) },
    }));
  }

  async record(rows: Delivery[]): Promise<void> {
    await this.ready();
    for (const r of rows) {
      const existing = await this.store.get<{ _seq: number }>(WEBHOOK_DELIVERIES, r.id);
      await this.store.put(WEBHOOK_DELIVERIES, { ...r, _seq: existing?._seq ?? this.nextSeq(), _recordedAt: new Date(this.now()) });
    }
  }

  async recordPending(rows: Delivery[]): Promise<void> {
    await this.ready();
    for (const r of rows) await this.store.insertIfAbsent(WEBHOOK_DELIVERIES, { ...r, _seq: this.nextSeq(), _recordedAt: new Date(this.now()) });
  }

  async list(endpointId: number, status: DeliveryStatus | undefined, page: { page: number; pageSize: number }) {
    await this.ready();
    const r = await this.store.find<Delivery & { _seq: number; _recordedAt?: Date }>({
      collection: WEBHOOK_DELIVERIES,
      filter: and(eq('endpointId', endpointId), status ? eq('status', status) : undefined),
      sort: [{ field: '_seq', dir: 'desc' }],
      page,
    });
    return { items: r.items.map(strip), total: r.total };
  }

  async get(endpointId: number, id: string): Promise<Delivery | null> {
    await this.ready();
    const r = await this.store.get<StoredDelivery>(WEBHOOK_DELIVERIES, id);
    return r && r.endpointId === endpointId ? strip(r) : null;
  }

  /** Counted here from the rows (the read store has no grouping), a page at a time. */
  async hourly(endpointId: number, since: number): Promise<HourCount[]> {
    await this.ready();
    const hours = new Map<number, HourCount>();
    const filter = and(eq('endpointId', endpointId), gte('attemptedAt', new Date(since).toISOString()));
    for (let page = 1; ; page++) {
      const r = await this.store.find<StoredDelivery>({ collection: WEBHOOK_DELIVERIES, filter, sort: [{ field: 'attemptedAt', dir: 'asc' }], page: { page, pageSize: 1000 } });
      for (const d of r.items) {
        const hour = Math.floor(Date.parse(d.attemptedAt!) / HOUR_MS) * HOUR_MS;
        const h = hours.get(hour) ?? { hour, succeeded: 0, failed: 0 };
        if (succeeded(d.status)) h.succeeded++;
        else h.failed++;
        hours.set(hour, h);
      }
      if (page * 1000 >= r.total) return [...hours.values()];
    }
  }

  async failingSince(endpointId: number, from?: string): Promise<string | null> {
    await this.ready();
    // By when the attempts were made (attemptedAt: ISO texts, which sort as the instants do), as
    // the embedded log does: a success's row can be older than failures made before it.
    const sorted = (status: DeliveryStatus, after: string | null, dir: 'asc' | 'desc', page: number) =>
      this.store.find<Delivery>({
        collection: WEBHOOK_DELIVERIES,
        filter: and(eq('endpointId', endpointId), eq('status', status), after === null ? undefined : gte('attemptedAt', after)),
        sort: [{ field: 'attemptedAt', dir }],
        page: { page, pageSize: PAGE },
      });
    const lastSuccess = (await sorted('succeeded', null, 'desc', 1)).items.find((d) => d.attemptedAt !== null);
    const since = lastSuccess?.attemptedAt ?? null;
    // Made after the last success, and at or after `from`: whichever bound is later.
    const fromFirst = from !== undefined && (since === null || from > since);
    const lower = fromFirst ? from : since;
    const counts = (at: string) => (lower === null ? true : fromFirst ? at >= lower : at > lower);
    // The first made after it that sent something: past those that sent nothing (NOT_SENT).
    const firstSent = async (status: DeliveryStatus) => {
      for (let page = 1; ; page++) {
        const { items } = await sorted(status, lower, 'asc', page);
        const d = items.find((x) => x.attemptedAt !== null && counts(x.attemptedAt) && !sentNothing(x));
        if (d || items.length < PAGE) return d?.attemptedAt ?? undefined;
      }
    };
    const [failed, abandoned] = await Promise.all([firstSent('failed'), firstSent('abandoned')]);
    return earliest(failed, abandoned);
  }
}

/** Rows read a page while a run of failures is looked for. */
const PAGE = 50;

type StoredDelivery = Delivery & { _seq: number; _recordedAt?: Date };
const strip = ({ _seq, _recordedAt, ...d }: StoredDelivery) => d as Delivery;

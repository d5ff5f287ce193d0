import type Database from 'better-sqlite3';
import type { ReadStore } from '../projections/store/port.js';
import { and, eq } from '../projections/store/port.js';
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
}

const publicRow = ({ endpointId: _e, ...rest }: Delivery) => rest;
export { publicRow as deliveryView };

/** Embedded: a table in the webhook database (a file, unless in memory), so the log survives restarts. */
export class SqliteDeliveryLog implements DeliveryLog {
  private readonly stmt;
  constructor(private readonly db: Database.Database) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, endpoint_id INTEGER NOT NULL, doc TEXT NOT NULL, status TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, status, seq);
    `);
    this.stmt = {
      upsert: db.prepare(
        'INSERT INTO webhook_deliveries (id, endpoint_id, doc, status) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, status = excluded.status',
      ),
      insertNew: db.prepare('INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, doc, status) VALUES (?, ?, ?, ?)'),
      page: db.prepare<[number, string | null, string | null, number, number], { doc: string }>(
        'SELECT doc FROM webhook_deliveries WHERE endpoint_id = ? AND (? IS NULL OR status = ?) ORDER BY seq DESC LIMIT ? OFFSET ?',
      ),
      count: db.prepare<[number, string | null, string | null], { n: number | bigint }>(
        'SELECT COUNT(*) AS n FROM webhook_deliveries WHERE endpoint_id = ? AND (? IS NULL OR status = ?)',
      ),
    };
  }

  async record(rows: Delivery[]): Promise<void> {
    if (!rows.length) return;
    await batcherFor(this.db).run(() => {
      for (const r of rows) this.stmt.upsert.run(r.id, r.endpointId, JSON.stringify(r), r.status);
    });
  }

  async recordPending(rows: Delivery[]): Promise<void> {
    if (!rows.length) return;
    await batcherFor(this.db).run(() => {
      for (const r of rows) this.stmt.insertNew.run(r.id, r.endpointId, JSON.stringify(r), r.status);
    });
  }

  async list(endpointId: number, status: DeliveryStatus | undefined, page: { page: number; pageSize: number }) {
    const s = status ?? null;
    const items = this.stmt.page.all(endpointId, s, s, page.pageSize, (page.page - 1) * page.pageSize).map((r) => JSON.parse(r.doc) as Delivery);
    return { items, total: Number(this.stmt.count.get(endpointId, s, s)!.n) };
  }
}

export const WEBHOOK_DELIVERIES = 'webhookDeliveries';

/** Production: a collection of the shared read store (MongoDB), visible to every API process. */
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
  private ready: Promise<void>;
  constructor(private readonly store: ReadStore) {
    this.ready = store.defineCollection({ name: WEBHOOK_DELIVERIES, idField: 'id', indexes: [['endpointId'], ['endpointId', 'status']] });
  }

  async record(rows: Delivery[]): Promise<void> {
    await this.ready;
    for (const r of rows) {
      const existing = await this.store.get<{ _seq: number }>(WEBHOOK_DELIVERIES, r.id);
      await this.store.put(WEBHOOK_DELIVERIES, { ...r, _seq: existing?._seq ?? this.nextSeq() });
    }
  }

  async recordPending(rows: Delivery[]): Promise<void> {
    await this.ready;
    for (const r of rows) await this.store.insertIfAbsent(WEBHOOK_DELIVERIES, { ...r, _seq: this.nextSeq() });
  }

  async list(endpointId: number, status: DeliveryStatus | undefined, page: { page: number; pageSize: number }) {
    await this.ready;
    const r = await this.store.find<Delivery & { _seq: number }>({
      collection: WEBHOOK_DELIVERIES,
      filter: and(eq('endpointId', endpointId), status ? eq('status', status) : undefined),
      sort: [{ field: '_seq', dir: 'desc' }],
      page,
    });
    return { items: r.items.map(({ _seq, ...d }) => d as Delivery), total: r.total };
  }
}

import Database from 'better-sqlite3';
import type { Projector } from '../projections/engine/projector.js';
import { mayFire } from './catalog.js';
import { envelopesIn } from './envelope.js';
import { ALL, type Cursor, type FeedQuery, type JsonPage } from './feed-cursor.js';
import type { StreamReader } from './history.js';

/**
 * The change feed materialized in the embedded read database (readmodels.sqlite): one row per
 * envelope, keyed by team and the envelope's number (decisions.md §7: log position times 10 plus
 * the type's index), holding its JSON as the webhook sends it. A page is one range scan of the
 * primary key and its JSON is written out verbatim, instead of reading every change's record
 * streams again at each read. Cursors stay log positions, so they survive rebuilds of this table.
 */
const TABLE = 'feed_envelopes';

const DDL = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  team INTEGER NOT NULL,
  seq  INTEGER NOT NULL,
  at   INTEGER NOT NULL,
  type TEXT NOT NULL,
  json TEXT NOT NULL,
  PRIMARY KEY (team, seq)
) WITHOUT ROWID`;

/**
 * The projector that fills the table, run by the projector thread beside the read models and
 * in the same transaction as their checkpoints: once a write has answered (its events are
 * projected), its envelopes are in the feed. `db` is that thread's writing connection; `streams`
 * its reader of the log file, for the payloads as of each change (the dispatcher's own code).
 * Replays rewrite the same rows (INSERT OR REPLACE), so it is idempotent.
 */
export function feedTableProjector(db: Database.Database, streams: StreamReader): Projector {
  db.exec(DDL);
  const insert = db.prepare<[number, bigint, number, string, string]>(`INSERT OR REPLACE INTO ${TABLE} (team, seq, at, type, json) VALUES (?, ?, ?, ?, ?)`);
  return {
    name: 'change-feed',
    version: 1,
    collections: [],
    tables: [TABLE],
    independent: true,
    reset: () => db.exec(`DELETE FROM ${TABLE}`),
    async apply(event) {
      if (!mayFire(event)) return;
      const envelopes = await envelopesIn(streams, event);
      const at = Date.parse(event.metadata.at);
      envelopes.forEach((e, i) => insert.run(e.team, event.position.prepare * 10n + BigInt(i), at, e.type, JSON.stringify(e)));
    },
  };
}

interface Row {
  seq: bigint;
  type: string;
  json: string;
}

/** Rows read per look when a page is filtered by type (it may take several). */
const BATCH = 1_000;
const EARLIEST = Number.MIN_SAFE_INTEGER;
const LATEST = Number.MAX_SAFE_INTEGER;

/** The envelope number just before the first one a cursor has not given: `after` is exclusive. */
const lastGiven = (c: Cursor): bigint => (c.position ? c.position.prepare * 10n + BigInt(c.seen) - 1n : -1n);
const cursorAt = (seq: bigint): Cursor => {
  const position = seq / 10n;
  return { position: { commit: position, prepare: position }, seen: Number(seq % 10n) + 1 };
};

/**
 * The main thread's reader of the table: its own connection to the read database, which the
 * projector thread has laid out before the runtime opens. `settle` waits until the table holds
 * every event of the log as it stands (the projector's position), so a reader woken by a commit
 * finds it, and a reader of another process's writes too.
 */
export class FeedTable {
  private readonly db: Database.Database;
  private readonly range: Database.Statement<[number, bigint, bigint, number, number, number], Row>;

  constructor(
    file: string,
    private readonly settle: () => Promise<void>,
  ) {
    this.db = new Database(file, { fileMustExist: true });
    this.db.pragma('busy_timeout = 10000');
    // Rows an erasure rewrites (rewrite below) leave no old bytes in free space.
    this.db.pragma('secure_delete = ON');
    this.range = this.db
      .prepare<[number, bigint, bigint, number, number, number], Row>(
        `SELECT seq, type, json FROM ${TABLE} WHERE team = ? AND seq > ? AND seq <= ? AND at BETWEEN ? AND ? ORDER BY seq LIMIT ?`,
      )
      .safeIntegers(true);
  }

  /** One page, as ChangeFeed.page answers it from the log: the same envelopes, `next` and `hasMore`. */
  async page(team: number, q: FeedQuery): Promise<JsonPage> {
    await this.settle();
    const until = q.until?.position ? q.until.position.prepare * 10n + BigInt(Math.min(q.until.seen, ALL)) - 1n : BigInt(LATEST) * 10n;
    const from = q.at?.from ?? EARLIEST;
    const to = q.at?.to ?? LATEST;
    const changes: string[] = [];
    let next = q.after;
    let after = lastGiven(q.after);
    // Unfiltered, one row past the limit tells whether more follow; filtered, read ahead in batches.
    const batch = q.types ? Math.max(BATCH, q.limit + 1) : q.limit + 1;
    for (;;) {
      const rows = this.range.all(team, after, until, Math.max(from, EARLIEST), Math.min(to, LATEST), batch);
      for (const r of rows) {
        if (q.types && !q.types(r.type)) continue;
        if (changes.length === q.limit) return { changes, next, hasMore: true };
        changes.push(r.json);
        next = cursorAt(r.seq);
      }
      if (rows.length < batch) return { changes, next, hasMore: false };
      after = rows[rows.length - 1].seq;
    }
  }

  /**
   * decisions.md §17: the team's rows that `stale` picks (by envelope number or JSON) are built
   * again by `rebuild` from the log as the erasure left it (or dropped, when nothing fires any
   * more); the erasure empties the file's WAL after (runtime/erasure.ts). Answers how many rows changed.
   */
  async rewrite(team: number, stale: (seq: bigint, json: string) => boolean, rebuild: (seq: bigint) => Promise<string | null>): Promise<number> {
    const scan = this.db.prepare<[number, bigint, number], Row>(`SELECT seq, type, json FROM ${TABLE} WHERE team = ? AND seq > ? ORDER BY seq LIMIT ?`).safeIntegers(true);
    const update = this.db.prepare<[string, number, bigint]>(`UPDATE ${TABLE} SET json = ? WHERE team = ? AND seq = ?`);
    const drop = this.db.prepare<[number, bigint]>(`DELETE FROM ${TABLE} WHERE team = ? AND seq = ?`);
    const changes: Array<{ seq: bigint; json: string | null }> = [];
    for (let after = -1n; ; ) {
      const rows = scan.all(team, after, BATCH);
      for (const r of rows) if (stale(r.seq, r.json)) changes.push({ seq: r.seq, json: await rebuild(r.seq) });
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1].seq;
    }
    this.db.transaction(() => {
      for (const c of changes) {
        if (c.json) update.run(c.json, team, c.seq);
        else drop.run(team, c.seq);
      }
    })();
    return changes.length;
  }

  close(): void {
    this.db.close();
  }
}

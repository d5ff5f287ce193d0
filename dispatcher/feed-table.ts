import Database from 'better-sqlite3';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Projector } from '../projections/engine/projector.js';
import { mayFire } from './catalog.js';
import { ENVELOPE_RULES, envelopesIn } from './envelope.js';
import { BulkFeedWriter } from './feed-bulk.js';
import { BLOCK, BLOCKS, BLOCKS_DDL, type Entry, entriesOf, type FeedReads, feedReads, packBlock, packer } from './feed-blocks.js';
import { ALL, type Cursor, type FeedQuery, type JsonPage } from './feed-cursor.js';
import { applyFeedRewrite, type FeedRewritePlan, type FeedRewritePlanner, planFeedRewrite } from './feed-rewrite.js';
import type { StreamReader } from './history.js';

/**
 * The change feed materialized in the embedded read database (readmodels.sqlite): one row per
 * envelope, keyed by team and the envelope's number (decisions.md §7: log position times 10 plus
 * the type's index), holding its JSON as the webhook sends it. A page is one range scan of the
 * primary key and its JSON is written out verbatim, instead of reading every change's record
 * streams again at each read. Cursors stay log positions, so they survive rebuilds of this table.
 * A team's older envelopes are packed into compressed blocks (feed-blocks.ts): a row each, they
 * were a third of the data dir.
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

/** The table's projector as a release's read-model versions name it (runtime/prepared.ts). */
// 2: a team's older envelopes packed in deflated blocks (feed_blocks); plus the envelopes' own rules (envelope.ts).
export const FEED_TABLE_VERSION = { name: 'change-feed', version: 2 + ENVELOPE_RULES } as const;

/**
 * The projector that fills the table, run by the projector thread beside the read models and
 * in the same transaction as their checkpoints: once a write has answered (its events are
 * projected), its envelopes are in the feed. `db` is that thread's writing connection; `streams`
 * its reader of the log file, for the payloads as of each change (the dispatcher's own code).
 * Replays rewrite the same rows (INSERT OR REPLACE), so it is idempotent. `bulk`: a build from
 * nothing (an offline rebuild), writing whole blocks straight away (feed-bulk.ts) until `endBulk`.
 */
export function feedTableProjector(db: Database.Database, streams: StreamReader, options: { block?: number; bulk?: boolean; bulkHeld?: number } = {}): Projector {
  const block = options.block ?? BLOCK;
  db.exec(DDL);
  db.exec(BLOCKS_DDL);
  const insert = db.prepare<[number, bigint, number, string, string]>(`INSERT OR REPLACE INTO ${TABLE} (team, seq, at, type, json) VALUES (?, ?, ?, ?, ?)`);
  const count = db.prepare<[number], number>(`SELECT count(*) FROM ${TABLE} WHERE team = ?`).pluck();
  const pack = packer(db, TABLE, block);
  const bulk = options.bulk ? new BulkFeedWriter(db, TABLE, block, pack, options.bulkHeld) : null;
  // The teams written since their rows were last counted: counted every so many envelopes, not
  // at each (the count is a range scan of up to a block's rows).
  const touched = new Set<number>();
  let since = 0;
  const checkEvery = Math.min(64, block);
  // A step of many events (startStep): each team's envelopes, held to the step's end.
  let held: Map<number, Entry[]> | null = null;
  const tail = db.prepare(`SELECT seq, at, type, json FROM ${TABLE} WHERE team = ? ORDER BY seq`).safeIntegers(true);
  const putBlock = db.prepare(`INSERT OR REPLACE INTO ${BLOCKS} (team, last, first, body) VALUES (?, ?, ?, ?)`);
  const removeRows = db.prepare(`DELETE FROM ${TABLE} WHERE team = ? AND seq BETWEEN ? AND ?`);
  /**
   * A team's envelopes held in a step, written as the rows and blocks one at a time would have
   * left once packed: its rows and these, oldest first, packed a block at a time as far as they
   * make whole blocks (where the packer would have cut them), the rest rows. The envelopes of a
   * whole block never become rows, read back and deleted.
   */
  const writeHeld = (team: number, entries: Entry[]) => {
    const rows = count.get(team)!;
    const old = rows ? (tail.all(team) as Array<{ seq: bigint; at: bigint; type: string; json: string }>) : [];
    if (rows + entries.length < block || (old.length && old[old.length - 1].seq >= entries[0].seq)) {
      // Short of a block, or a replay among the rows: a row each, as live.
      for (const e of entries) insert.run(team, e.seq, e.at, e.type, e.json);
      if (rows + entries.length >= block) pack(team);
      return;
    }
    const all: Entry[] = old.map((r) => ({ seq: r.seq, at: Number(r.at), type: r.type, json: r.json }));
    for (const e of entries) all.push(e);
    const whole = all.length - (all.length % block);
    for (let i = 0; i < whole; i += block) {
      const entriesOfBlock = all.slice(i, i + block);
      putBlock.run(team, entriesOfBlock[block - 1].seq, entriesOfBlock[0].seq, packBlock(entriesOfBlock));
    }
    if (old.length) removeRows.run(team, old[0].seq, all[Math.min(whole, old.length) - 1].seq);
    for (let i = Math.max(whole, old.length); i < all.length; i++) insert.run(team, all[i].seq, all[i].at, all[i].type, all[i].json);
  };
  return {
    ...FEED_TABLE_VERSION,
    collections: [],
    tables: [TABLE, BLOCKS],
    independent: true,
    reset: () => {
      bulk?.clear();
      db.exec(`DELETE FROM ${TABLE}; DELETE FROM ${BLOCKS}`);
    },
    endBulk: bulk ? () => bulk.finish() : undefined,
    startStep: (many) => {
      held = many && !bulk ? new Map() : null;
    },
    endStep: () => {
      if (!held) return;
      for (const [team, entries] of held) writeHeld(team, entries);
      held = null;
    },
    async apply(event) {
      if (!mayFire(event)) return;
      const envelopes = await envelopesIn(asOfFirst(streams, event), event);
      const at = Date.parse(event.metadata.at);
      if (bulk) {
        envelopes.forEach((e, i) => bulk.add(e.team, { seq: event.position.prepare * 10n + BigInt(i), at, type: e.type, json: JSON.stringify(e) }));
        return;
      }
      if (held) {
        envelopes.forEach((e, i) => {
          let entries = held!.get(e.team);
          if (!entries) held!.set(e.team, (entries = []));
          entries.push({ seq: event.position.prepare * 10n + BigInt(i), at, type: e.type, json: JSON.stringify(e) });
        });
        return;
      }
      envelopes.forEach((e, i) => {
        insert.run(e.team, event.position.prepare * 10n + BigInt(i), at, e.type, JSON.stringify(e));
        touched.add(e.team);
        since++;
      });
      if (since < checkEvery) return;
      since = 0;
      for (const team of touched) if (count.get(team)! >= block) pack(team);
      touched.clear();
    },
  };
}

/**
 * A reader for one event's payloads that knows the first event of a stream is all of that stream
 * up to the event (in this log, positions are one per event), so it reads nothing for it: most
 * events of a big team are creations. Every other stream it reads from the log.
 */
export function asOfFirst(streams: StreamReader, event: RecordedEvent): StreamReader {
  const { readStreamUntil } = streams;
  if (event.revision !== 0n || !readStreamUntil) return streams;
  return {
    readStream: (stream) => streams.readStream(stream),
    readStreamUntil: (stream, position) =>
      stream === event.stream && position.commit === event.position.commit ? Promise.resolve([event]) : readStreamUntil.call(streams, stream, position),
  };
}

const EARLIEST = Number.MIN_SAFE_INTEGER;
const LATEST = Number.MAX_SAFE_INTEGER;

/** An erasure's plan for the table (feed-rewrite.ts) on any connection to its file: the erasure's scanning thread's. */
export const planFeedTableRewrite = (
  db: Database.Database,
  team: number,
  after: bigint,
  stale: (seq: bigint, json: string, type: string) => boolean,
  rebuild: (seq: bigint) => Promise<string | null>,
): Promise<FeedRewritePlan> => planFeedRewrite(db, TABLE, team, after, stale, rebuild);

/** Plans an erasure's rewrite makes before it gives up (and the erasure is tried again after a back-off, runtime/erasure.ts). */
const REWRITE_ROUNDS = 10;

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
  private readonly reads: FeedReads;

  constructor(
    file: string,
    private readonly settle: () => Promise<void>,
  ) {
    this.db = new Database(file, { fileMustExist: true });
    this.db.pragma('busy_timeout = 10000');
    // Rows and blocks an erasure rewrites (rewrite below) leave no old bytes in free space.
    this.db.pragma('secure_delete = ON');
    this.reads = feedReads(this.db, TABLE);
  }

  /** One page, as ChangeFeed.page answers it from the log: the same envelopes, `next` and `hasMore`. */
  async page(team: number, q: FeedQuery): Promise<JsonPage> {
    await this.settle();
    const until = q.until?.position ? q.until.position.prepare * 10n + BigInt(Math.min(q.until.seen, ALL)) - 1n : BigInt(LATEST) * 10n;
    const from = q.at?.from ?? EARLIEST;
    const to = q.at?.to ?? LATEST;
    const changes: string[] = [];
    let next = q.after;
    // One snapshot for the page: blocks and rows are read by several statements.
    return this.db
      .transaction(() => {
        for (const e of entriesOf(this.reads, team, lastGiven(q.after), until)) {
          if (e.at < from || e.at > to || (q.types && !q.types(e.type))) continue;
          if (changes.length === q.limit) return { changes, next, hasMore: true };
          changes.push(e.json);
          next = cursorAt(e.seq);
        }
        return { changes, next, hasMore: false };
      })
      .deferred();
  }

  /**
   * decisions.md §17: the team's envelopes that `stale` picks (by envelope number or JSON), in its
   * single rows and inside its packed blocks, are built again by `rebuild` from the log as the
   * erasure left it (or dropped, when nothing fires any more); a block holding one is packed
   * again whole. Planned on this thread: the erasure plans off it (rewriteBy). The erasure empties
   * the file's WAL after (runtime/erasure.ts). Answers how many envelopes changed.
   */
  rewrite(team: number, stale: (seq: bigint, json: string, type: string) => boolean, rebuild: (seq: bigint) => Promise<string | null>): Promise<number> {
    return this.rewriteBy(team, (after) => planFeedTableRewrite(this.db, team, after, stale, rebuild));
  }

  /**
   * The rewrite with its plan made by `plan` (feed-rewrite.ts), perhaps on another thread and
   * connection, then written here in one short transaction. What the projector thread packed or
   * wrote again between a plan and its write is planned again from there, until a plan is
   * written whole.
   */
  async rewriteBy(team: number, plan: FeedRewritePlanner): Promise<number> {
    let changed = 0;
    for (let after = -1n, round = 1; ; round++) {
      const done = applyFeedRewrite(this.db, TABLE, team, await plan(after));
      changed += done.changed;
      if (done.redoAfter === null) return changed;
      // Each round starts at the rows the projector moved since the last: the few newest.
      if (round === REWRITE_ROUNDS) throw new Error(`the change feed's rewrite for an erasure kept meeting new blocks after ${round} plans`);
      after = done.redoAfter;
    }
  }

  close(): void {
    this.db.close();
  }
}

import type Database from 'better-sqlite3';
import { BLOCKS, type Entry, packBlock, unpackBlock } from './feed-blocks.js';

/**
 * An erasure's rewrite of the change feed's table (decisions.md §17) in two halves, so that the
 * half whose cost grows with a team's history can run away from the main thread
 * (runtime/feed-scan.ts): `planFeedRewrite` walks every row and every block of the team, builds
 * again each envelope the erasure may have touched and keeps only those whose text changes, with
 * their blocks packed again; `applyFeedRewrite` writes the plan in one short transaction, each
 * row and block only if it still holds what the plan read.
 */

/** A single row to write again: `json` null drops it (the envelope fires no longer). */
export interface RowChange {
  seq: bigint;
  old: string;
  json: string | null;
}

/** A block to write again, whole (keyed by its last envelope's number): `next` null drops it (none of its envelopes fires any more). */
export interface BlockChange {
  first: bigint;
  last: bigint;
  old: Uint8Array;
  next: { first: bigint; last: bigint; body: Uint8Array } | null;
  changed: number;
}

export interface FeedRewritePlan {
  rows: RowChange[];
  blocks: BlockChange[];
}

/** Builds what a rewrite must write for envelopes numbered above `after`; the caller decides on which thread. */
export type FeedRewritePlanner = (after: bigint) => Promise<FeedRewritePlan>;

/** Rows a plan reads per look. */
const BATCH = 1_000;

/**
 * The team's envelopes numbered above `after` that `stale` picks (by number or text), in its
 * single rows and inside its blocks, built again by `rebuild` from the log as the erasure left it.
 * An envelope built again to the same text is left alone: the log no longer holds an erased
 * value, so one that still reads the same never held one (`stale` matches text, and a common
 * value such as a city matches many records that are not the person's). Not one snapshot: the
 * rows are read before the blocks, and the projector only moves rows into new blocks, so each
 * envelope is seen at least once; one seen as a row and again in the block it moved to is
 * written in the block (the row's check fails, see applyFeedRewrite).
 */
export async function planFeedRewrite(
  db: Database.Database,
  table: string,
  team: number,
  after: bigint,
  stale: (seq: bigint, json: string, type: string) => boolean,
  rebuild: (seq: bigint) => Promise<string | null>,
): Promise<FeedRewritePlan> {
  const rowsAfter = db.prepare<[number, bigint, number], { seq: bigint; type: string; json: string }>(`SELECT seq, type, json FROM ${table} WHERE team = ? AND seq > ? ORDER BY seq LIMIT ?`).safeIntegers(true);
  const blockAfter = db.prepare<[number, bigint], { first: bigint; last: bigint; body: Buffer }>(`SELECT first, last, body FROM ${BLOCKS} WHERE team = ? AND last > ? ORDER BY last LIMIT 1`).safeIntegers(true);
  const rows: RowChange[] = [];
  for (let from = after; ; ) {
    const batch = rowsAfter.all(team, from, BATCH);
    for (const r of batch) {
      if (!stale(r.seq, r.json, r.type)) continue;
      const json = await rebuild(r.seq);
      if (json !== r.json) rows.push({ seq: r.seq, old: r.json, json });
    }
    if (batch.length < BATCH) break;
    from = batch[batch.length - 1].seq;
  }
  const blocks: BlockChange[] = [];
  for (let from = after; ; ) {
    const block = blockAfter.get(team, from);
    if (!block) break;
    from = block.last;
    let changed = 0;
    const entries: Entry[] = [];
    for (const e of unpackBlock(block.body)) {
      const json = stale(e.seq, e.json, e.type) ? await rebuild(e.seq) : e.json;
      if (json !== e.json) changed++;
      if (json !== null) entries.push(json === e.json ? e : { ...e, json });
    }
    if (!changed) continue;
    const next = entries.length ? { first: entries[0].seq, last: entries[entries.length - 1].seq, body: packBlock(entries) } : null;
    blocks.push({ first: block.first, last: block.last, old: block.body, next, changed });
  }
  return { rows, blocks };
}

/**
 * Writes a plan in one transaction, taken before anything is read (IMMEDIATE), so no projector
 * step lands between the checks and the writes. A row or block that no longer holds what the plan
 * read (the projector packed those rows into a new block, or wrote a block again, after the plan
 * was made) is not written: answers the lowest envelope number such a change covered, from
 * which a new plan must be made, or null when the whole plan was written. Answers also how many
 * envelopes changed.
 */
export function applyFeedRewrite(db: Database.Database, table: string, team: number, plan: FeedRewritePlan): { changed: number; redoAfter: bigint | null } {
  const rowNow = db.prepare<[number, bigint], string>(`SELECT json FROM ${table} WHERE team = ? AND seq = ?`).pluck();
  const update = db.prepare<[string, number, bigint]>(`UPDATE ${table} SET json = ? WHERE team = ? AND seq = ?`);
  const drop = db.prepare<[number, bigint]>(`DELETE FROM ${table} WHERE team = ? AND seq = ?`);
  const blockNow = db.prepare<[number, bigint], Buffer>(`SELECT body FROM ${BLOCKS} WHERE team = ? AND last = ?`).pluck();
  const dropBlock = db.prepare<[number, bigint]>(`DELETE FROM ${BLOCKS} WHERE team = ? AND last = ?`);
  const putBlock = db.prepare<[number, bigint, bigint, Uint8Array]>(`INSERT INTO ${BLOCKS} (team, last, first, body) VALUES (?, ?, ?, ?)`);
  return db
    .transaction(() => {
      let changed = 0;
      let redoAfter: bigint | null = null;
      const redo = (seq: bigint) => {
        if (redoAfter === null || seq - 1n < redoAfter) redoAfter = seq - 1n;
      };
      for (const c of plan.rows) {
        if (rowNow.get(team, c.seq) !== c.old) {
          redo(c.seq);
          continue;
        }
        if (c.json === null) drop.run(team, c.seq);
        else update.run(c.json, team, c.seq);
        changed++;
      }
      for (const b of plan.blocks) {
        const now = blockNow.get(team, b.last);
        if (!now || !Buffer.from(b.old.buffer, b.old.byteOffset, b.old.byteLength).equals(now)) {
          redo(b.first);
          continue;
        }
        dropBlock.run(team, b.last);
        if (b.next) putBlock.run(team, b.next.last, b.next.first, b.next.body);
        changed += b.changed;
      }
      return { changed, redoAfter };
    })
    .immediate();
}

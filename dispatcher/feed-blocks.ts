import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type Database from 'better-sqlite3';

/**
 * The change feed's table keeps a team's recent envelopes one row each (feed_envelopes) and packs
 * older ones, BLOCK at a time, into one compressed row of feed_blocks. Envelopes repeat their keys
 * and most of their values (a record's every field, null ones included), so a block deflates to a
 * fourteenth of its text, where a row each would barely shrink (one envelope holds too little to
 * repeat), and inflating a block costs about 2 µs an envelope against the 12 µs a change takes to
 * serve. A block never changes once written; reads merge blocks and rows by envelope number.
 */
export const BLOCKS = 'feed_blocks';

/** Envelopes per block: enough for deflate to find the repeats, few enough to inflate for one page. */
export const BLOCK = 256;

export const BLOCKS_DDL = `CREATE TABLE IF NOT EXISTS ${BLOCKS} (
  team  INTEGER NOT NULL,
  last  INTEGER NOT NULL,
  first INTEGER NOT NULL,
  body  BLOB NOT NULL,
  PRIMARY KEY (team, last)
) WITHOUT ROWID`;

/** One envelope as the table gives it back. */
export interface Entry {
  seq: bigint;
  at: number;
  type: string;
  json: string;
}

/**
 * A block's text: a line per envelope, `seq TAB at TAB type TAB json`. JSON.stringify escapes
 * every control character inside strings and adds no whitespace, so neither TAB nor LF occurs in
 * an envelope's JSON; nor in a type name.
 */
export function packBlock(entries: Entry[]): Buffer {
  return deflateRawSync(blockText(entries), { level: LEVEL });
}

/** A block's text as UTF-8, written piece by piece into one buffer kept for the next block. */
let scratch = Buffer.alloc(0);

/**
 * The UTF-8 of the lines joined (packBlock), without the joined string: a rebuild packs every
 * envelope of the log, and joining made each line's pieces a string, then the lines one more,
 * then its UTF-8 (1.2 µs an envelope; 0.7 written straight into the buffer). The view it answers
 * is valid until the next call.
 */
function blockText(entries: Entry[]): Buffer {
  // At most 3 bytes of UTF-8 a UTF-16 unit; the numbers' digits and signs, the tabs and the newline.
  let most = 0;
  for (const e of entries) most += 3 * (e.type.length + e.json.length) + 64;
  if (scratch.length < most) scratch = Buffer.allocUnsafe(Math.max(most, 2 * scratch.length));
  let at = 0;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    at += scratch.write(`${i ? '\n' : ''}${e.seq}\t${e.at}\t${e.type}\t`, at);
    at += scratch.write(e.json, at);
  }
  return scratch.subarray(0, at);
}

/**
 * zlib's level for every block, live, rebuilt or rewritten at an erasure: measured on the scale
 * log's blocks, level 3 deflates an envelope in 1.5 µs to a thirteenth of its text, the default
 * (6) in 3.9 µs to a fifteenth. The live projector packs on the thread every write waits for, a
 * rebuild packs every envelope of the log (a sixth of its second thread's time at 6); inflating
 * reads any level alike.
 */
const LEVEL = 3;

export function unpackBlock(body: Buffer): Entry[] {
  const text = inflateRawSync(body).toString('utf8');
  const out: Entry[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const a = text.indexOf('\t', start);
    const b = text.indexOf('\t', a + 1);
    const c = text.indexOf('\t', b + 1);
    out.push({ seq: BigInt(text.slice(start, a)), at: Number(text.slice(a + 1, b)), type: text.slice(b + 1, c), json: text.slice(c + 1, end) });
    start = end + 1;
  }
  return out;
}

/**
 * Moves a team's oldest envelopes from single rows into blocks of `block`, as many whole blocks
 * as its rows make; the rest stay rows until more come. Runs in the projector's transaction.
 */
export function packer(db: Database.Database, table: string, block: number): (team: number) => void {
  const tail = db.prepare(`SELECT seq, at, type, json FROM ${table} WHERE team = ? ORDER BY seq`).safeIntegers(true);
  const insert = db.prepare(`INSERT OR REPLACE INTO ${BLOCKS} (team, last, first, body) VALUES (?, ?, ?, ?)`);
  const remove = db.prepare(`DELETE FROM ${table} WHERE team = ? AND seq BETWEEN ? AND ?`);
  return (team) => {
    const rows = tail.all(team) as Array<{ seq: bigint; at: bigint; type: string; json: string }>;
    for (let i = 0; i + block <= rows.length; i += block) {
      const entries = rows.slice(i, i + block).map((r) => ({ seq: r.seq, at: Number(r.at), type: r.type, json: r.json }));
      const first = entries[0].seq;
      const last = entries[entries.length - 1].seq;
      insert.run(team, last, first, packBlock(entries));
      remove.run(team, first, last);
    }
  };
}

/** Rows read per look from the single rows. */
const BATCH = 1_000;

/** A reading connection's statements, prepared once. */
export interface FeedReads {
  range: Database.Statement;
  block: Database.Statement;
}

export function feedReads(db: Database.Database, table: string): FeedReads {
  return {
    range: db.prepare(`SELECT seq, at, type, json FROM ${table} WHERE team = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ${BATCH}`).safeIntegers(true),
    block: db.prepare(`SELECT last, body FROM ${BLOCKS} WHERE team = ? AND last > ? AND first <= ? ORDER BY last LIMIT 1`).safeIntegers(true),
  };
}

/**
 * A team's envelopes numbered in (after, until], in order, from its blocks and its rows merged.
 * An envelope found in both (a replay that wrote a packed change again) is given once.
 */
export function* entriesOf(reads: FeedReads, team: number, after: bigint, until: bigint): Generator<Entry> {
  const rows = rowsOf(reads.range, team, after, until);
  const blocks = blocksOf(reads.block, team, after, until);
  let r = rows.next();
  let b = blocks.next();
  let given = after;
  while (!r.done || !b.done) {
    let e: Entry;
    if (b.done || (!r.done && r.value.seq <= b.value.seq)) {
      e = r.value as Entry;
      r = rows.next();
    } else {
      e = b.value;
      b = blocks.next();
    }
    if (e.seq <= given) continue;
    given = e.seq;
    yield e;
  }
}

function* rowsOf(range: Database.Statement, team: number, after: bigint, until: bigint): Generator<Entry> {
  for (let from = after; ; ) {
    const rows = range.all(team, from, until) as Array<{ seq: bigint; at: bigint; type: string; json: string }>;
    for (const row of rows) yield { seq: row.seq, at: Number(row.at), type: row.type, json: row.json };
    if (rows.length < BATCH) return;
    from = rows[rows.length - 1].seq;
  }
}

function* blocksOf(next: Database.Statement, team: number, after: bigint, until: bigint): Generator<Entry> {
  let given = after;
  for (let from = after; ; ) {
    const block = next.get(team, from, until) as { last: bigint; body: Buffer } | undefined;
    if (!block) return;
    for (const e of unpackBlock(block.body)) {
      if (e.seq <= given || e.seq > until) continue;
      given = e.seq;
      yield e;
    }
    from = block.last;
  }
}

import type Database from 'better-sqlite3';
import { BLOCKS, type Entry, packBlock } from './feed-blocks.js';

/** Envelopes held in memory at most, over every team, before they are written as rows. */
const HELD = 65_536;

/**
 * How the change feed's table is written while it is built from nothing (an offline rebuild,
 * runtime/rebuild.ts): each team's envelopes are held in memory until they make a block, then
 * packed and written as that block at once. Live, every envelope is a row that the packer reads
 * back and deletes once a block's worth has come (feed-blocks.ts packer): in a rebuild, where every
 * envelope ends in a block, that was a row insert, a read and a delete each for nothing.
 *
 * What it leaves answers every page as the live table does (reads merge blocks and rows by
 * envelope number, so where the block edges fall does not change a page): `finish` writes what
 * is still held as rows. Where many teams hold more than HELD envelopes together, everything held
 * is written as rows (`spill`), and those teams' envelopes go on as live: rows, packed a block at a time.
 * What is held is not rolled back with a step that fails: in a rebuild that failure ends the
 * rebuild, whose file is removed.
 */
export class BulkFeedWriter {
  private readonly held = new Map<number, Entry[]>();
  private count = 0;
  /** The teams whose envelopes were written as rows to bound memory, with the rows each has. */
  private readonly spilled = new Map<number, number>();
  private readonly putBlock: Database.Statement;
  private readonly putRow: Database.Statement;

  constructor(
    db: Database.Database,
    table: string,
    private readonly block: number,
    private readonly pack: (team: number) => void,
    private readonly limit = HELD,
  ) {
    this.putBlock = db.prepare(`INSERT OR REPLACE INTO ${BLOCKS} (team, last, first, body) VALUES (?, ?, ?, ?)`);
    this.putRow = db.prepare(`INSERT OR REPLACE INTO ${table} (team, seq, at, type, json) VALUES (?, ?, ?, ?, ?)`);
  }

  /** One envelope, in log order. */
  add(team: number, entry: Entry): void {
    const rows = this.spilled.get(team);
    if (rows !== undefined) {
      // As live from here on: a block's worth of rows is packed (the team's rows all come after
      // its blocks, so blocks never overlap, which reads rely on).
      this.putRow.run(team, entry.seq, entry.at, entry.type, entry.json);
      if (rows + 1 < this.block) this.spilled.set(team, rows + 1);
      else {
        this.pack(team);
        this.spilled.set(team, 0);
      }
      return;
    }
    let entries = this.held.get(team);
    if (!entries) this.held.set(team, (entries = []));
    entries.push(entry);
    this.count++;
    if (entries.length === this.block) {
      this.putBlock.run(team, entry.seq, entries[0].seq, packBlock(entries));
      this.held.delete(team);
      this.count -= this.block;
    } else if (this.count > this.limit) this.spill(true);
  }

  /** Writes what is held (a team's envelopes short of a block) as rows. */
  finish(): void {
    this.spill(false);
  }

  /** Forgets what is held (the table is emptied: engine/sqlite-step.ts prepare). */
  clear(): void {
    this.held.clear();
    this.count = 0;
    this.spilled.clear();
  }

  /** `more`: envelopes may still come, which these teams then write as rows. */
  private spill(more: boolean): void {
    for (const [team, entries] of this.held) {
      for (const e of entries) this.putRow.run(team, e.seq, e.at, e.type, e.json);
      if (more) this.spilled.set(team, entries.length);
    }
    this.held.clear();
    this.count = 0;
  }
}

import type Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import type { RecordedEvent } from '../domain/shared/events.js';

/**
 * Erasure in the log (decisions.md §17). The embedded log rewrites a constituent's events in
 * place: each keeps its type, revision, position and metadata (so every revision count and
 * envelope id stays), its personal fields become null, and its data gains `erased: true`.
 */

type Data = Record<string, unknown>;

export { erasedData } from '../domain/constituent/erased.js';

/**
 * Every personal value a constituent's stream ever held, as text: what the purge of the stores
 * derived from the log (feed rows, queued bodies, stored answers, mail files) looks for.
 */
export function personalValues(events: readonly Pick<RecordedEvent, 'data'>[]): string[] {
  const found = new Set<string>();
  for (const e of events) {
    const d = e.data as Data;
    for (const part of [d.fields, d.changes]) {
      if (!part || typeof part !== 'object') continue;
      for (const f of PERSONAL_FIELDS) {
        const v = (part as Data)[f];
        if (typeof v === 'string' && v !== '') found.add(v);
      }
    }
  }
  return [...found];
}

/**
 * Leaves no old page of `db`'s file in its WAL: a TRUNCATE checkpoint copies every frame into the
 * database and empties the WAL file. It needs a moment with no writer and no reader of an older
 * snapshot, so it is retried until it gets one (each try waits in SQLite's busy handler first).
 */
export async function truncateWal(db: Database.Database, tries = 200): Promise<void> {
  for (let i = 0; ; i++) {
    const [r] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number | bigint }>;
    // Number(): a connection reading integers as bigints (the log's) answers 0n.
    if (!r || Number(r.busy) === 0) return;
    if (i >= tries) throw new Error(`WAL checkpoint(TRUNCATE) stayed busy after ${tries} tries: the erased values may remain in the WAL until it succeeds`);
    await sleep(25);
  }
}

/**
 * Rewrites a stream's events with `rewrite` in one transaction on `db` (secure_delete on, so the
 * old bytes are overwritten, not left in free space), then truncates the WAL. Answers how many
 * rows changed.
 */
export async function rewriteStreamRows(db: Database.Database, stream: string, rewrite: (e: RecordedEvent) => Data, read: (stream: string) => RecordedEvent[]): Promise<number> {
  db.pragma('secure_delete = ON');
  const update = db.prepare<[string, bigint]>('UPDATE events SET data = ? WHERE position = ?');
  const changed = db.transaction(() => {
    let n = 0;
    for (const e of read(stream)) {
      const next = JSON.stringify(rewrite(e));
      if (next === JSON.stringify(e.data)) continue;
      update.run(next, e.position.commit);
      n++;
    }
    return n;
  })();
  await truncateWal(db);
  return changed;
}

import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

/** The erasures' journal (runtime/erasure.ts): a row for each erasure begun and not yet finished. */
export const ERASURE_JOURNAL_FILE = 'erasures.sqlite';

/**
 * The constituents whose erasure is under way in the data dir, read by another process than the
 * server's (a `turnout rebuild --prepare`, which must not build read models from values an erasure
 * is removing). Read-only: a journal not made yet, or without its table, holds none.
 */
export function erasuresUnderway(dataDir: string): number[] {
  const file = path.join(dataDir, ERASURE_JOURNAL_FILE);
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'erasures'").get();
    return table ? (db.prepare('SELECT id FROM erasures ORDER BY started_at').pluck().all() as number[]) : [];
  } finally {
    db.close();
  }
}

/** Why a prepare stops, or will not start, while an erasure is under way. */
export class ErasureUnderway extends Error {
  constructor(readonly ids: number[]) {
    super(
      `an erasure is under way on this data dir (constituent ${ids.join(', ')}): read models prepared now would keep values it removes ` +
        '(decisions.md §17), so none are kept; run the prepare again once it has finished',
    );
    this.name = 'ErasureUnderway';
  }
}

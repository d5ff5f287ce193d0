import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { privateFile, secureDataDir } from './private-files.js';

/** Another live process holds the data dir. */
export class DataDirBusy extends Error {
  constructor(
    readonly dir: string,
    readonly holderPid: number | null,
  ) {
    super(
      `${dir} is in use by another Turnout process${holderPid ? ` (pid ${holderPid})` : ''}. Without TURNOUT_NATS_URL a data dir belongs to one ` +
        'process (its webhook queue is not shared): stop that process, use another TURNOUT_DATA_DIR, or set TURNOUT_NATS_URL to run several.',
    );
    this.name = 'DataDirBusy';
  }
}

export interface DataDirLock {
  release(): void;
}

const LOCK_FILE = 'turnout.lock';
const PID_FILE = 'turnout.lock.pid';

/**
 * Claims the data dir for this process. Node has no flock, so the lock is SQLite's own: a
 * database in EXCLUSIVE locking mode keeps the file lock of its first write until the connection
 * closes, and the operating system drops it when the process dies, so a crash never leaves a
 * stale lock. An exclusively locked database cannot be read, so the holder's pid goes in a file
 * beside it, for the refusal's message only (a stale pid file decides nothing).
 */
export function lockDataDir(dir: string): DataDirLock {
  secureDataDir(dir);
  privateFile(path.join(dir, LOCK_FILE), { sqlite: true });
  const db = new Database(path.join(dir, LOCK_FILE));
  try {
    db.pragma('busy_timeout = 0');
    // The rollback journal: in WAL mode an exclusive connection would not block others' opens the same way.
    db.pragma('journal_mode = DELETE');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL, since TEXT NOT NULL)');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid, since) VALUES (?, ?)').run(process.pid, new Date().toISOString());
    db.exec('COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY') || (err as { code?: string }).code === 'SQLITE_LOCKED') throw new DataDirBusy(path.resolve(dir), holderPid(dir));
    throw err;
  }
  writeFileSync(path.join(dir, PID_FILE), `${process.pid}\n`, { mode: 0o600 });
  return { release: () => db.close() };
}

function holderPid(dir: string): number | null {
  try {
    const pid = Number(readFileSync(path.join(dir, PID_FILE), 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

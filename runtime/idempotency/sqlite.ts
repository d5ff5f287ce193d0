import { randomUUID } from 'node:crypto';
import path from 'node:path';
import Database from 'better-sqlite3';
import { truncateWal } from '../../eventlog/erase.js';
import { privateFile, secureDataDir } from '../private-files.js';
import { type Begun, type IdempotencyStore, STALE_MS, type StoredAnswer, TTL_MS } from './port.js';

interface Row {
  fingerprint: string;
  started_at: number;
  status: number | null;
  body: string | null;
  headers: string | null;
  owner: string | number | null;
}

/**
 * Who runs a key: this process's pid and a token of this start. The token tells an entry of an
 * earlier process that had the same pid (a restarted container's server is pid 1 again) from ours.
 */
const OWNER = `${process.pid}/${randomUUID().slice(0, 8)}`;

/** Whether the process that took a running entry is gone: the file is local, so its pid names a process of this machine. */
function gone(owner: string | number | null): boolean {
  if (owner === null || owner === OWNER) return false;
  const pid = Number.parseInt(String(owner), 10);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Idempotency keys in their own small SQLite file in the data dir (`idempotency.sqlite`, 0600),
 * so they survive restarts without taking the event log's write lock. One statement inserts a
 * new entry or takes over an expired or abandoned one, so of racing requests exactly one starts.
 *
 * What one turn of the event loop asks (takes, answers, releases) commits in one transaction,
 * in the order asked, so the store costs one commit per turn, not one per statement. Durability
 * costs one fsync per turn, and only in a turn that completes an answer: taking a key commits
 * without one (synchronous=NORMAL: WAL keeps it across a process crash; a power cut may lose it,
 * which leaves what a crash mid-request leaves, a key a retry may run again), and answers commit
 * at synchronous=FULL, whose fsync also covers every take before it. An answer is sent only once
 * its commit has returned.
 *
 * A running entry names the process running it: one whose process has died (killed mid-request)
 * is taken over at once, so a client's retry after a crash and restart runs instead of waiting
 * out the stale time (a batch write resumes where it stopped, decisions.md §14).
 */
export class SqliteIdempotencyStore implements IdempotencyStore {
  private readonly stmts;
  private lastPurge = 0;
  private pending: Array<{ work: () => unknown; done: (value: unknown) => void; failed: (err: unknown) => void; durable: boolean }> = [];

  constructor(
    private readonly db: Database.Database,
    /** Answers an erasure's redaction reads per turn of the event loop. */
    private readonly redactPage = 500,
  ) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    // Stored answers redacted by an erasure (or expired) leave no old bytes in free space (decisions.md §17).
    db.pragma('secure_delete = ON');
    db.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
      scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, started_at INTEGER NOT NULL,
      status INTEGER, body TEXT, headers TEXT, PRIMARY KEY (scope, key)) WITHOUT ROWID`);
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('idempotency_keys')").all();
    if (!columns.some((c) => c.name === 'owner')) db.exec('ALTER TABLE idempotency_keys ADD COLUMN owner TEXT');
    this.stmts = {
      // Takes the key unless a live entry holds it: done and under the TTL, or running and fresh.
      take: db.prepare<[string, string, string, number, number, number]>(
        `INSERT INTO idempotency_keys (scope, key, fingerprint, started_at, owner) VALUES (?, ?, ?, ?, '${OWNER}')
         ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, started_at = excluded.started_at, status = NULL, body = NULL, headers = NULL, owner = excluded.owner
         WHERE (status IS NOT NULL AND started_at <= ?) OR (status IS NULL AND started_at <= ?)`,
      ),
      get: db.prepare<[string, string], Row>('SELECT fingerprint, started_at, status, body, headers, owner FROM idempotency_keys WHERE scope = ? AND key = ?'),
      takeOver: db.prepare<[string, number, string, string, string | number]>(
        `UPDATE idempotency_keys SET fingerprint = ?, started_at = ?, owner = '${OWNER}' WHERE scope = ? AND key = ? AND status IS NULL AND owner = ?`,
      ),
      complete: db.prepare<[number, string, string, string, string]>('UPDATE idempotency_keys SET status = ?, body = ?, headers = ? WHERE scope = ? AND key = ?'),
      release: db.prepare<[string, string]>('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status IS NULL'),
      purge: db.prepare<[number]>('DELETE FROM idempotency_keys WHERE started_at <= ?'),
    };
  }

  /** The data dir's file, or an in-memory database for `:memory:`. */
  static open(dataDir: string): SqliteIdempotencyStore {
    if (dataDir === ':memory:') return new SqliteIdempotencyStore(new Database(':memory:'));
    secureDataDir(dataDir);
    const file = path.join(dataDir, 'idempotency.sqlite');
    privateFile(file, { sqlite: true });
    return new SqliteIdempotencyStore(new Database(file));
  }

  begin(scope: string, key: string, fingerprint: string, now: number): Promise<Begun> {
    return this.queued(() => this.take(scope, key, fingerprint, now), false);
  }

  private take(scope: string, key: string, fingerprint: string, now: number): Begun {
    if (now - this.lastPurge > 60_000) {
      this.lastPurge = now;
      this.stmts.purge.run(now - TTL_MS);
    }
    if (this.stmts.take.run(scope, key, fingerprint, now, now - TTL_MS, now - STALE_MS).changes) return { state: 'started' };
    // Inside the batch's transaction the live entry that refused the take is still there.
    const row = this.stmts.get.get(scope, key)!;
    if (row.status === null) {
      // Its process died mid-request: nothing runs it any more.
      if (gone(row.owner) && this.stmts.takeOver.run(fingerprint, now, scope, key, row.owner!).changes) return { state: 'started' };
      return { state: 'running', fingerprint: row.fingerprint };
    }
    return { state: 'done', fingerprint: row.fingerprint, answer: { status: row.status, body: row.body ?? '', headers: JSON.parse(row.headers ?? '{}') } };
  }

  complete(scope: string, key: string, answer: StoredAnswer): Promise<void> {
    return this.queued(() => void this.stmts.complete.run(answer.status, answer.body, JSON.stringify(answer.headers), scope, key), true);
  }

  release(scope: string, key: string): Promise<void> {
    return this.queued(() => void this.stmts.release.run(scope, key), false);
  }

  /** Runs `work` in the transaction of this turn's batch, in the order asked. */
  private queued<T>(work: () => T, durable: boolean): Promise<T> {
    return new Promise<T>((done, failed) => {
      if (!this.pending.length) setImmediate(() => this.flush());
      this.pending.push({ work, done: done as (value: unknown) => void, failed, durable });
    });
  }

  /**
   * Commits what this turn asked in one transaction: durably (synchronous=FULL) when it holds an
   * answer, whose fsync then also covers every take before it.
   */
  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    const durable = batch.some((b) => b.durable);
    try {
      if (durable) this.db.pragma('synchronous = FULL');
      const results = this.db.transaction(() => batch.map((b) => b.work()))();
      batch.forEach((b, i) => b.done(results[i]));
    } catch (err) {
      batch.forEach((b) => b.failed(err));
    } finally {
      if (durable && this.db.open) this.db.pragma('synchronous = NORMAL');
    }
  }

  /**
   * decisions.md §17: the stored answers `stale` picks are replaced by `redact(body)`, durably,
   * then the WAL is emptied so no old page stays in it. Answers how many changed.
   */
  async redact(stale: (body: string) => boolean, redact: (body: string) => string): Promise<number> {
    // A page a turn: a day of answers read and tested at once held the main thread, and every
    // request with it. Each page commits on its own; an erasure that dies between pages redacts
    // them all again at the next start.
    const page = this.db.prepare<[string, string, number], { scope: string; key: string; body: string }>(
      'SELECT scope, key, body FROM idempotency_keys WHERE body IS NOT NULL AND (scope, key) > (?, ?) ORDER BY scope, key LIMIT ?',
    );
    const update = this.db.prepare('UPDATE idempotency_keys SET body = ? WHERE scope = ? AND key = ?');
    let changed = 0;
    for (let after = { scope: '', key: '' }; ; ) {
      const last = await this.queued(() => {
        const rows = page.all(after.scope, after.key, this.redactPage);
        for (const r of rows) if (stale(r.body)) changed += update.run(redact(r.body), r.scope, r.key).changes;
        return rows.length === this.redactPage ? rows[rows.length - 1] : null;
      }, true);
      if (!last) break;
      after = last;
    }
    await truncateWal(this.db);
    return changed;
  }

  async close(): Promise<void> {
    if (this.pending.length) this.flush();
    this.db.close();
  }
}

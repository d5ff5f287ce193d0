// @ts-check
/*
 * The embedded idempotency store's table and the statements of one turn (sqlite.ts), shared by
 * the store's thread (sqlite-thread.js) and the main thread, which runs them itself for an
 * in-memory store and while the thread starts. Plain JavaScript, typed by JSDoc and checked by
 * tsc, as the log's writer thread is, so that the thread runs from the sources under the test
 * runner and, copied by tsc, from the build.
 */

/** How long answers are kept and when a running entry is stale: port.ts's TTL_MS and STALE_MS, which the store passes in. */
/** @typedef {{ ttlMs: number; staleMs: number }} Times */

/**
 * One statement of a turn, in the order asked:
 * - take: (scope, key, fingerprint, now, mark) starts the key or tells what holds it (a Begun of port.ts);
 * - complete: (scope, key, status, body, headers' JSON, started at) keeps an answer;
 * - release: (scope, key, started at) forgets a running entry;
 * - abandon: (scope, key, started at) leaves a running entry for the next take of the same request (port.ts);
 *   each of these three only while the take that started at that time holds the entry (null: any take).
 * - page: (after scope, after key, limit) the stored answers after that entry, in key order;
 * - redacted: rows (body, scope, key, started_at) written back by an erasure, each only if the
 *   entry is still the one the page read (a take of an expired entry in between changes its start).
 * @typedef {['take', string, string, string, number, string | null]
 *   | ['complete', string, string, number, string, string, number | null]
 *   | ['release', string, string, number | null]
 *   | ['abandon', string, string, number | null]
 *   | ['page', string, string, number]
 *   | ['redacted', Array<[string, string, string, number]>]} Op
 */

/** @typedef {{ fingerprint: string; started_at: number; status: number | null; body: string | null; headers: string | null; owner: string | number | null; mark: string | null }} Row */

/** The owner of an abandoned entry: no process runs it, and the next take of its request takes it over. */
const ABANDONED = 'abandoned';
/** @typedef {{ scope: string; key: string; body: string; started_at: number }} PageRow */

/** Whether a turn holds a statement whose commit must be durable before it is answered: an answer kept, or an erasure's rewrite. */
const durable = (/** @type {Op[]} */ ops) => ops.some((op) => op[0] === 'complete' || op[0] === 'redacted');

/**
 * Whether the process that took a running entry is gone: the file is local, so its pid names a
 * process of this machine. `owner` is this process's own (its pid and a token of its start).
 * @param {string | number | null} entry
 * @param {string} owner
 */
function gone(entry, owner) {
  if (entry === null || entry === owner) return false;
  if (entry === ABANDONED) return true;
  const pid = Number.parseInt(String(entry), 10);
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return /** @type {NodeJS.ErrnoException} */ (err).code === 'ESRCH';
  }
}

/**
 * Sets the connection up (WAL, secure_delete: stored answers redacted or expired leave no old
 * bytes in free space, decisions.md §17) and the table, and answers a function that runs one
 * turn's statements in one transaction: durably (synchronous=FULL) when it keeps an answer, whose
 * fsync then also covers every take before it, else at NORMAL (WAL keeps a take across a process
 * crash; a power cut may lose it, which leaves what a crash mid-request leaves).
 * @param {import('better-sqlite3').Database} db
 * @param {string} owner who runs a key this connection takes
 * @param {Times} times
 * @returns {(ops: Op[]) => unknown[]}
 */
export function openTable(db, owner, { ttlMs, staleMs }) {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('secure_delete = ON');
  db.exec(`CREATE TABLE IF NOT EXISTS idempotency_keys (
    scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL, started_at INTEGER NOT NULL,
    status INTEGER, body TEXT, headers TEXT, PRIMARY KEY (scope, key)) WITHOUT ROWID`);
  const columns = /** @type {Array<{ name: string }>} */ (db.prepare("SELECT name FROM pragma_table_info('idempotency_keys')").all());
  if (!columns.some((c) => c.name === 'owner')) db.exec('ALTER TABLE idempotency_keys ADD COLUMN owner TEXT');
  if (!columns.some((c) => c.name === 'mark')) db.exec('ALTER TABLE idempotency_keys ADD COLUMN mark TEXT');
  const stmts = {
    // Takes the key unless an entry under the TTL holds it (a running one may be taken over below).
    take: db.prepare(
      `INSERT INTO idempotency_keys (scope, key, fingerprint, started_at, owner, mark) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, started_at = excluded.started_at, status = NULL, body = NULL, headers = NULL, owner = excluded.owner, mark = excluded.mark
       WHERE started_at <= ?`,
    ),
    get: db.prepare('SELECT fingerprint, started_at, status, body, headers, owner, mark FROM idempotency_keys WHERE scope = ? AND key = ?'),
    // The mark stays: the write the entry's first request began is the one a takeover resumes.
    takeOver: db.prepare('UPDATE idempotency_keys SET started_at = ?, owner = ? WHERE scope = ? AND key = ? AND status IS NULL AND owner IS ?'),
    // The take's start names it (port.ts): a try taken over since ends nothing.
    abandon: db.prepare(`UPDATE idempotency_keys SET owner = '${ABANDONED}' WHERE scope = ? AND key = ? AND status IS NULL AND started_at = coalesce(?, started_at)`),
    complete: db.prepare('UPDATE idempotency_keys SET status = ?, body = ?, headers = ? WHERE scope = ? AND key = ? AND started_at = coalesce(?, started_at)'),
    release: db.prepare('DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND status IS NULL AND started_at = coalesce(?, started_at)'),
    purge: db.prepare('DELETE FROM idempotency_keys WHERE started_at <= ?'),
    page: db.prepare('SELECT scope, key, body, started_at FROM idempotency_keys WHERE body IS NOT NULL AND (scope, key) > (?, ?) ORDER BY scope, key LIMIT ?'),
    redacted: db.prepare('UPDATE idempotency_keys SET body = ? WHERE scope = ? AND key = ? AND started_at = ? AND status IS NOT NULL'),
  };
  let lastPurge = 0;

  /**
   * @param {string} scope
   * @param {string} key
   * @param {string} fingerprint
   * @param {number} now
   * @param {string | null} mark
   */
  const take = (scope, key, fingerprint, now, mark) => {
    if (now - lastPurge > 60_000) {
      lastPurge = now;
      stmts.purge.run(now - ttlMs);
    }
    if (stmts.take.run(scope, key, fingerprint, now, owner, mark, now - ttlMs).changes) return { state: 'started' };
    // Inside the turn's transaction the live entry that refused the take is still there.
    const row = /** @type {Row} */ (stmts.get.get(scope, key));
    if (row.status === null) {
      // Its process died mid-request, or it ended unanswered, or it is stale: nothing runs it any
      // more. Only a repeat of its request takes it over: another is told the key is in use.
      const over = row.started_at <= now - staleMs || gone(row.owner, owner);
      if (over && row.fingerprint === fingerprint && stmts.takeOver.run(now, owner, scope, key, row.owner).changes) return row.mark === null ? { state: 'started' } : { state: 'started', earlier: row.mark };
      return { state: 'running', fingerprint: row.fingerprint };
    }
    return { state: 'done', fingerprint: row.fingerprint, answer: { status: row.status, body: row.body ?? '', headers: JSON.parse(row.headers ?? '{}') } };
  };

  /** @param {Op} op */
  const run = (op) => {
    switch (op[0]) {
      case 'take':
        return take(op[1], op[2], op[3], op[4], op[5]);
      case 'complete':
        return void stmts.complete.run(op[3], op[4], op[5], op[1], op[2], op[6]);
      case 'release':
        return void stmts.release.run(op[1], op[2], op[3]);
      case 'abandon':
        return void stmts.abandon.run(op[1], op[2], op[3]);
      case 'page':
        return stmts.page.all(op[1], op[2], op[3]);
      case 'redacted': {
        let changed = 0;
        for (const [body, scope, key, startedAt] of op[1]) changed += stmts.redacted.run(body, scope, key, startedAt).changes;
        return changed;
      }
    }
  };

  return (ops) => {
    const full = durable(ops);
    try {
      if (full) db.pragma('synchronous = FULL');
      return db.transaction(() => ops.map(run))();
    } finally {
      if (full && db.open) db.pragma('synchronous = NORMAL');
    }
  };
}

import { existsSync } from 'node:fs';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { eraseConstituent } from '../commands/constituents.js';
import type { WriteContext } from '../commands/context.js';
import type { CommandDeps } from '../commands/deps.js';
import { constituentStream } from '../domain/constituent/events.js';
import { PERSON_COPIES, PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import { DomainError, notFound } from '../domain/shared/errors.js';
import type { Source } from '../domain/shared/events.js';
import { envelopeRebuilder, mentionsAny, purgeQueuedBodies, staleEnvelope } from '../dispatcher/erasure.js';
import type { FeedTable } from '../dispatcher/feed-table.js';
import type { FeedModel } from '../dispatcher/feed-model.js';
import { erasedData, personalValues, truncateWal } from '../eventlog/erase.js';
import type { FollowerStatus } from '../eventlog/follower.js';
import type { Sealer } from '../eventlog/sealing.js';
import { forgetRecordStream } from '../projections/history/stream-cache.js';
import type { IdempotencyStore } from './idempotency/port.js';
import { planFeedRewriteOffThread } from './feed-scan.js';
import { ERASURE_JOURNAL_FILE } from './erasure-journal.js';
import { cleanOtherVersions, type SharedReadModels } from './erasure-versions.js';
import { discardPrepared } from './prepared.js';
import { privateFile } from './private-files.js';
import { LOG_FILE } from './read-models.js';
import { removeRebuildLeftovers } from './rebuild.js';
import { optimizeSearchOffThread } from './search-optimize.js';
import { truncateWalOffThread } from './wal-truncate.js';

/**
 * Erasure (decisions.md §17), durably: a journal row is written first (the values to look for,
 * sealed under the main key), then the erasure is recorded in the log (ConstituentErased: the
 * read models drop the person and clear linked copies as they apply it), then every store that
 * holds plaintext is rewritten, then the row goes. A process that dies half-way finds the row at
 * its next start and finishes (resume), so the answer's promise holds across a crash.
 *
 * The steps are each idempotent, so finishing twice is harmless.
 */

export interface ErasureStores {
  deps: CommandDeps;
  dataDir: string;
  mainSealer: Sealer;
  feedTable?: FeedTable;
  /** The change feed's collection in the read store, where the read models are not the data dir's file. */
  feedModel?: FeedModel;
  /** The read store builds of several versions share (MongoDB), whose other versions' collections the erasure cleans too. */
  readModels?: SharedReadModels;
  webhookDb: Database.Database | null;
  idempotency: IdempotencyStore;
  /** The read database's file, whose WAL is emptied after the read models dropped the person. */
  readModelsFile: string | null;
  report: (message: string) => void;
}

interface JournalRow {
  team: number;
  id: number;
  reason: string | null;
  source: Source;
  key_name: string | null;
  sealed: string;
}

/** The steps, in order; TURNOUT_TEST_ERASURE_KILL_AFTER names one to die after (the crash test). */
const STEPS = ['journal', 'prepared', 'recorded', 'log', 'feed', 'queue', 'answers', 'mail', 'search-index', 'read-models'] as const;
type Step = (typeof STEPS)[number];

export class Erasure {
  private readonly journal: Database.Database;
  /** Erasures a previous run began and left unfinished: not ready until they are done. */
  private readonly inherited = new Set<number>();
  private resuming: Promise<void> | null = null;
  private closed = false;
  /**
   * Erasures finish one at a time in a process: their steps now await between pages (the mail
   * files, the stored answers), and two interleaved rewrites of one file would fail or put an
   * erased value back.
   */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly s: ErasureStores) {
    const file = s.dataDir === ':memory:' ? ':memory:' : path.join(s.dataDir, ERASURE_JOURNAL_FILE);
    if (file !== ':memory:') privateFile(file, { sqlite: true });
    this.journal = new Database(file);
    this.journal.pragma('journal_mode = WAL');
    this.journal.pragma('synchronous = FULL');
    this.journal.pragma('secure_delete = ON');
    this.journal.exec(`CREATE TABLE IF NOT EXISTS erasures (
      id INTEGER PRIMARY KEY, team INTEGER NOT NULL, reason TEXT, source TEXT NOT NULL, key_name TEXT, sealed TEXT NOT NULL, started_at TEXT NOT NULL)`);
    for (const row of this.rows()) this.inherited.add(row.id);
  }

  /**
   * Erases constituent `id` of the team: answers once nothing of its personal values remains in
   * any store (or throws, leaving the journal row for the next start to finish).
   */
  async erase(ctx: WriteContext, id: number, reason: string | null): Promise<{ PkConstituent: number; erasedAt: string }> {
    const events = await this.s.deps.log.readStream(constituentStream(id));
    if (!events.length || events[0].metadata.team !== ctx.team) throw notFound('constituent', id);
    if (!this.s.deps.log.rewriteStream)
      throw new DomainError('not_supported', 'Erasure needs an event log that can rewrite events (the embedded one); this deployment\'s EventStoreDB log cannot yet.');
    const values = personalValues(events);
    // Sealed: the journal must not itself become a copy of what is being erased.
    const sealed = this.s.mainSealer.sealText(JSON.stringify(values), `erasure:${id}`);
    this.journal
      .prepare('INSERT OR REPLACE INTO erasures (id, team, reason, source, key_name, sealed, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, ctx.team, reason, ctx.source, ctx.keyName, sealed, new Date().toISOString());
    this.step('journal');
    return this.inTurn(() => this.finish({ team: ctx.team, id, reason, source: ctx.source, key_name: ctx.keyName, sealed }, ctx));
  }

  /** Finishes every erasure a previous process started and did not end (at start, once the read models have caught up). */
  resume(): Promise<void> {
    // A process stopped before its read models caught up finishes them at its next start instead.
    if (this.closed) return Promise.resolve();
    return (this.resuming ??= (async () => {
      for (const row of this.rows()) {
        this.s.report(`erasure: finishing the erasure of constituent ${row.id} (team ${row.team}) that a previous run began`);
        const ctx: WriteContext = { team: row.team, source: row.source, keyName: row.key_name, correlationId: `erasure-${row.id}`, now: new Date() };
        await this.inTurn(() => this.finish(row, ctx));
      }
    })().finally(() => {
      this.resuming = null;
    }));
  }

  /** Readiness (GET /readyz): not ready while an erasure a previous run began is unfinished. */
  status(): FollowerStatus | null {
    // An erasure running now is an ordinary write: it never makes this process not ready.
    return this.inherited.size ? { name: 'erasures', state: 'catching_up', behind: this.inherited.size } : null;
  }

  close(): void {
    this.closed = true;
    this.journal.close();
  }

  private rows(): JournalRow[] {
    return this.journal.prepare<[], JournalRow>('SELECT id, team, reason, source, key_name, sealed FROM erasures ORDER BY started_at').all();
  }

  private async finish(row: JournalRow, ctx: WriteContext): Promise<{ PkConstituent: number; erasedAt: string }> {
    const { deps } = this.s;
    const stream = constituentStream(row.id);
    if (this.s.readModelsFile) {
      // Read models built beside the live ones hold the person too: a prepare's for the next
      // release (which stops once it sees the journal's row), a rebuild's that was killed.
      await discardPrepared(this.s.dataDir, this.s.report);
      removeRebuildLeftovers(this.s.dataDir, this.s.report);
    }
    this.step('prepared');
    const { erasedAt } = await eraseConstituent(deps, ctx, row.id, row.reason);
    this.step('recorded');
    const values = JSON.parse(this.s.mainSealer.openText(row.sealed, `erasure:${row.id}`)) as string[];
    await deps.log.rewriteStream!(stream, erasedData);
    forgetRecordStream(deps.log, stream);
    this.step('log');
    // Every change projected so far is in the stores scanned below, built as the log stood then.
    await deps.settle(await deps.log.head());
    const stale = mentionsAny(values);
    const positions = (await deps.log.readStream(stream)).map((e) => e.position.prepare);
    const rebuild = envelopeRebuilder(deps.log, row.team);
    const staleOne = staleEnvelope(values, positions);
    if (this.s.feedTable) {
      const { readModelsFile } = this.s;
      // The table grows with the team's history: planned off the main thread where it is a file.
      await (readModelsFile
        ? this.s.feedTable.rewriteBy(row.team, (after) =>
            planFeedRewriteOffThread({ readModelsFile, logFile: path.join(this.s.dataDir, LOG_FILE), team: row.team, after, values, positions }),
          )
        : this.s.feedTable.rewrite(row.team, staleOne, rebuild));
    }
    await this.s.feedModel?.rewrite(row.team, staleOne, rebuild);
    // Another build's feed (another version) may make its envelopes otherwise: redacted, not rebuilt.
    await this.s.feedModel?.redactOtherVersions(row.team, stale, redactDocument(new Set(values)));
    // So are the other read models of other versions: a build that no longer runs never applies ConstituentErased.
    if (this.s.readModels) {
      const cleaned = await cleanOtherVersions(this.s.readModels, { team: row.team, id: row.id, values });
      if (cleaned) this.s.report(`erasure: cleaned ${cleaned} document(s) of constituent ${row.id} in read-model collections of other versions`);
    }
    this.step('feed');
    if (this.s.webhookDb) {
      await purgeQueuedBodies(this.s.webhookDb, row.team, stale, rebuild);
      await truncateWal(this.s.webhookDb);
    }
    this.step('queue');
    await this.s.idempotency.redact?.(stale, redactAnswer(new Set(values)));
    this.step('answers');
    await scrubMail(path.join(this.s.dataDir, 'outbox'), values);
    this.step('mail');
    if (this.s.readModelsFile) {
      // The projectors dropped the person and its linked copies (secure_delete zeroed the old
      // bytes); the old pages may still lie in the WAL until it is emptied.
      const db = new Database(this.s.readModelsFile, { fileMustExist: true });
      try {
        db.pragma('busy_timeout = 10000');
        // A removed row's search text waits in its search table's pending rows until the
        // projector thread's next search sync (about once a second while writes go on, or once
        // they pause for 100 ms) takes its grams out of the index.
        await searchSynced(db);
      } finally {
        db.close();
      }
      // The synced rows' grams (and those of every older revision, and of linked records' old
      // copies of the name) still lie in older segments behind delete entries (FTS5
      // secure-delete is off): a merge of the whole index drops them, off the main thread.
      await optimizeSearchOffThread(this.s.readModelsFile);
      this.step('search-index');
      // The merge rewrote the index into the WAL: copying it back is off the main thread too.
      await truncateWalOffThread(this.s.readModelsFile);
    }
    this.step('read-models');
    this.journal.prepare('DELETE FROM erasures WHERE id = ?').run(row.id);
    await truncateWal(this.journal);
    this.inherited.delete(row.id);
    return { PkConstituent: row.id, erasedAt };
  }

  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const mine = this.turn.then(run, run);
    this.turn = mine.catch(() => undefined);
    return mine;
  }

  private step(done: Step): void {
    // The crash test's hook: die right after a step, as a power cut would.
    if (process.env.TURNOUT_TEST_ERASURE_KILL_AFTER === done) process.kill(process.pid, 'SIGKILL');
  }
}

/**
 * Waits until the search tables' pending rows present now (each holds a row's old text) have been
 * synced. Rows noted later are not waited for: under a steady write rate the tables are seldom
 * empty. A row noted again meanwhile is waited for once more, which only takes longer.
 */
export async function searchSynced(db: Database.Database, timeoutMs = 30_000): Promise<void> {
  const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB '*__pending[0-9]*' AND name NOT GLOB '*_a[idu]'`).pluck().all() as string[];
  const pending = tables
    .map((t) => {
      const table = `"${t.replaceAll('"', '""')}"`;
      const rows = JSON.stringify(db.prepare(`SELECT row FROM ${table}`).pluck().all());
      const left = db.prepare(`SELECT 1 FROM ${table} WHERE row IN (SELECT value FROM json_each(?)) LIMIT 1`);
      return { rows, left };
    })
    .filter((p) => p.rows !== '[]');
  const waiting = () => pending.some((p) => p.left.get(p.rows) !== undefined);
  for (const until = Date.now() + timeoutMs; waiting(); ) {
    if (Date.now() > until) throw new Error('the read models did not bring their search index up to date in time; the erasure finishes at the next start');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const REDACTED_KEYS = new Set([...PERSONAL_FIELDS, ...PERSON_COPIES]);

type Json = Record<string, unknown>;

/** A value with each personal field (or linked copy) that holds one of `values` set to null; `nested`: also inside strings that hold JSON objects (a feed document's envelope). */
function redactor(values: ReadonlySet<string>, nested: boolean): (v: unknown) => unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (nested && typeof v === 'string' && v.startsWith('{')) {
      try {
        return JSON.stringify(walk(JSON.parse(v)));
      } catch {
        return v;
      }
    }
    if (!v || typeof v !== 'object') return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = REDACTED_KEYS.has(k) && typeof x === 'string' && values.has(x) ? null : walk(x);
    return out;
  };
  return walk;
}

/** A stored answer's JSON with each personal field (or linked copy) that holds an erased value set to null. */
export function redactAnswer(values: ReadonlySet<string>): (body: string) => string {
  const walk = redactor(values, false);
  return (body) => {
    try {
      return JSON.stringify(walk(JSON.parse(body)));
    } catch {
      return body;
    }
  };
}

/** A read-model document redacted as redactAnswer does, within its fields that hold JSON text too (another build's feed envelopes). */
export function redactDocument(values: ReadonlySet<string>): <T extends Json>(doc: T) => T {
  const walk = redactor(values, true);
  return (doc) => walk(doc) as typeof doc;
}

/**
 * The embedded mail files (`<dataDir>/outbox/*.eml`) that name an erased value: each value
 * replaced, the file swapped whole. Read one at a time without blocking: the outbox grows with
 * every notification ever sent.
 */
async function scrubMail(dir: string, values: readonly string[]): Promise<void> {
  if (!values.length || !existsSync(dir)) return;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.eml')) continue;
    const file = path.join(dir, name);
    const text = await readFile(file, 'utf8');
    if (!values.some((v) => text.includes(v))) continue;
    let next = text;
    for (const v of values) next = next.split(v).join('[erased]');
    await writeFile(file + '.tmp', next, { mode: 0o600 });
    await rename(file + '.tmp', file);
  }
}

export const ERASURE_STEPS = STEPS;

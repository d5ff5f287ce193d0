import path from 'node:path';
import Database from 'better-sqlite3';
import { eraseConstituent } from '../commands/constituents.js';
import type { WriteContext } from '../commands/context.js';
import type { CommandDeps } from '../commands/deps.js';
import { constituentStream } from '../domain/constituent/events.js';
import { DomainError, notFound } from '../domain/shared/errors.js';
import type { RecordedEvent, Source } from '../domain/shared/events.js';
import { notificationStream } from '../domain/notification/delivery.js';
import { NOTIFICATIONS } from '../projections/outbox.js';
import { type Doc, eq } from '../projections/store/port.js';
import { envelopeRebuilder, mentionsAny, purgeQueuedBodies, staleEnvelope } from '../dispatcher/erasure.js';
import type { FeedTable } from '../dispatcher/feed-table.js';
import type { FeedModel } from '../dispatcher/feed-model.js';
import { erasedData, personalValues, truncateWal } from '../eventlog/erase.js';
import { backoffDelay, type RetryPolicy } from '../eventlog/backoff.js';
import type { FollowerStatus } from '../eventlog/follower.js';
import type { Sealer } from '../eventlog/sealing.js';
import { forgetRecordStream } from '../projections/history/stream-cache.js';
import { ERASURE_RETRY, ErasurePending, type PendingErasure, readinessOf, scrubbedError } from './erasure-pending.js';
import { namesAnyInAnyCase, redactAnswer, redactDocument, scrubMail, scrubText } from './erasure-redact.js';
import type { IdempotencyStore } from './idempotency/port.js';
import { planFeedRewriteOffThread } from './feed-scan.js';
import { ERASURE_JOURNAL_FILE } from './erasure-journal.js';
import { cleanOtherVersions, type SharedReadModels } from './erasure-versions.js';
import { discardPrepared } from './prepared.js';
import { privateFile } from './private-files.js';
import { LOG_FILE } from './read-models.js';
import { removeRebuildLeftovers } from './rebuild-files.js';
import { optimizeSearchOffThread } from './search-optimize.js';
import { truncateWalOffThread } from './wal-truncate.js';
import type { DeliveryQueue } from '../dispatcher/queue/port.js';
import { StreamNotRewritable } from '../eventlog/port.js';

/**
 * Erasure (decisions.md §17), durably: a journal row is written first (the values to look for,
 * sealed under the main key), then the erasure is recorded in the log (ConstituentErased: the
 * read models drop the person and clear linked copies as they apply it), then every store that
 * holds plaintext is rewritten, then the row goes. A process that dies half-way finds the row at
 * its next start and finishes (resume), so the answer's promise holds across a crash; a step that
 * fails without a crash is tried again by the process itself, after a back-off (attempt). Each
 * step finished is recorded in the row, and the next attempt starts after it.
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
  /** The delivery queue where it is not the embedded one (NATS JetStream), told of the erasure: it cannot rewrite the bodies it holds (DeliveryQueue.noteErasure). */
  queue?: () => Promise<DeliveryQueue>;
  idempotency: IdempotencyStore;
  /** The read database's file, whose WAL is emptied after the read models dropped the person. */
  readModelsFile: string | null;
  report: (message: string) => void;
  /** The delay between attempts at an erasure that failed (erasure-pending.ts); 1 s doubling to 60 s by default. */
  retry?: RetryPolicy;
}

interface JournalRow {
  team: number;
  id: number;
  reason: string | null;
  source: Source;
  key_name: string | null;
  sealed: string;
  started_at: string;
  /** The last step finished; an attempt starts after it. */
  step: Step | null;
}

/** The steps, in order; TURNOUT_TEST_ERASURE_KILL_AFTER names one to die after (the crash test). */
const STEPS = ['journal', 'prepared', 'recorded', 'log', 'feed', 'queue', 'answers', 'mail', 'search-index', 'read-models'] as const;
type Step = (typeof STEPS)[number];

/** Each step's work, as a failed attempt's answer and log line name it (the step after the last one finished). */
const WORK: Record<Step, string> = {
  journal: 'the journal',
  prepared: 'removing read models prepared or left beside the live ones',
  recorded: 'recording the erasure in the log',
  log: "the log's rewrite",
  feed: "the change feed's rewrite",
  queue: 'the queued webhooks\' rewrite',
  answers: 'the stored answers\' rewrite',
  mail: 'the mail files\' rewrite',
  'search-index': "the search index's merge",
  'read-models': "emptying the read models' WAL",
};
const nextStep = (done: Step | null): Step => STEPS[Math.min(STEPS.length - 1, done ? STEPS.indexOf(done) + 1 : 1)];

/** An unfinished erasure of this process: a previous run's, or one whose attempt failed. */
interface Unfinished {
  row: JournalRow;
  failures: number;
  lastError: string | null;
  nextAt: number | null;
  timer: NodeJS.Timeout | null;
  /** Begun by a previous run (readiness waits for it from the start). */
  inherited: boolean;
  /** The attempt under way (or waiting for its turn): a request for the same erasure joins it. */
  running: Promise<{ PkConstituent: number; erasedAt: string }> | null;
}

export class Erasure {
  private readonly journal: Database.Database;
  /** Erasures journaled and not finished, by constituent: not ready until they are done. */
  private readonly unfinished = new Map<number, Unfinished>();
  private readonly retry: RetryPolicy;
  private resuming: Promise<void> | null = null;
  private closed = false;
  /**
   * Erasures finish one at a time in a process: their steps now await between pages (the mail
   * files, the stored answers), and two interleaved rewrites of one file would fail or put an
   * erased value back.
   */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly s: ErasureStores) {
    this.retry = s.retry ?? ERASURE_RETRY;
    const file = s.dataDir === ':memory:' ? ':memory:' : path.join(s.dataDir, ERASURE_JOURNAL_FILE);
    if (file !== ':memory:') privateFile(file, { sqlite: true });
    this.journal = new Database(file);
    this.journal.pragma('journal_mode = WAL');
    this.journal.pragma('synchronous = FULL');
    this.journal.pragma('secure_delete = ON');
    this.journal.exec(`CREATE TABLE IF NOT EXISTS erasures (
      id INTEGER PRIMARY KEY, team INTEGER NOT NULL, reason TEXT, source TEXT NOT NULL, key_name TEXT, sealed TEXT NOT NULL, started_at TEXT NOT NULL)`);
    // Journals from before the steps were recorded: their erasures start from the beginning.
    const columns = this.journal.prepare<[], { name: string }>('PRAGMA table_info(erasures)').all();
    if (!columns.some((c) => c.name === 'step')) this.journal.exec('ALTER TABLE erasures ADD COLUMN step TEXT');
    for (const row of this.rows()) this.unfinished.set(row.id, { row, inherited: true, failures: 0, lastError: null, nextAt: null, timer: null, running: null });
  }

  /**
   * Erases constituent `id` of the team: answers once nothing of its personal values remains in
   * any store. Should a step fail, the erasure stays journaled and this process finishes it by
   * itself (ErasurePending); a request for an erasure already journaled joins its attempt under
   * way, or makes the next one now, from the step that failed.
   */
  async erase(ctx: WriteContext, id: number, reason: string | null): Promise<{ PkConstituent: number; erasedAt: string }> {
    const events = await this.s.deps.log.readStream(constituentStream(id));
    if (!events.length || events[0].metadata.team !== ctx.team) throw notFound('constituent', id);
    if (!this.s.deps.log.rewriteStream)
      throw new DomainError('not_supported', 'Erasure needs an event log that can rewrite events (the embedded one); this deployment\'s EventStoreDB log cannot yet.');
    const journaled = this.unfinished.get(id);
    // Its values were sealed before the log lost them: read again now, the log would give none.
    if (journaled) return this.attempt(journaled, ctx);
    const values = personalValues(events);
    // Sealed: the journal must not itself become a copy of what is being erased.
    const sealed = this.s.mainSealer.sealText(JSON.stringify(values), `erasure:${id}`);
    const row: JournalRow = { team: ctx.team, id, reason, source: ctx.source, key_name: ctx.keyName, sealed, started_at: new Date().toISOString(), step: null };
    this.journal
      .prepare('INSERT OR REPLACE INTO erasures (id, team, reason, source, key_name, sealed, started_at, step) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)')
      .run(id, ctx.team, reason, ctx.source, ctx.keyName, sealed, row.started_at);
    const entry: Unfinished = { row, inherited: false, failures: 0, lastError: null, nextAt: null, timer: null, running: null };
    this.unfinished.set(id, entry);
    this.step(row, 'journal');
    return this.attempt(entry, ctx);
  }

  /** Finishes every erasure a previous process started and did not end (at start, once the read models have caught up). */
  resume(): Promise<void> {
    // A process stopped before its read models caught up finishes them at its next start instead.
    if (this.closed) return Promise.resolve();
    return (this.resuming ??= (async () => {
      for (const entry of [...this.unfinished.values()]) {
        if (entry.failures || entry.running) continue;
        this.s.report(`erasure: finishing the erasure of constituent ${entry.row.id} (team ${entry.row.team}) that a previous run began`);
        // A failure is logged and retried by attempt itself; the others need not wait for it.
        await this.attempt(entry, this.contextOf(entry.row)).catch(() => undefined);
      }
    })().finally(() => {
      this.resuming = null;
    }));
  }

  /** Readiness (GET /readyz): not ready while an erasure is unfinished (erasure-pending.ts readinessOf). */
  status(): FollowerStatus | null {
    return readinessOf(this.pending());
  }

  /** The unfinished erasures, oldest first, for the admin surface. */
  pending(): PendingErasure[] {
    return [...this.unfinished.values()]
      .sort((a, b) => a.row.started_at.localeCompare(b.row.started_at))
      .map((u) => ({
        PkConstituent: u.row.id,
        teamId: u.row.team,
        state: u.running ? 'running' : u.failures ? 'retrying' : 'waiting',
        fromPreviousRun: u.inherited,
        attempts: u.failures,
        lastError: u.lastError,
        lastStep: u.row.step ?? 'journal',
        startedAt: u.row.started_at,
        nextAttemptAt: u.nextAt === null || u.running ? null : new Date(u.nextAt).toISOString(),
      }));
  }

  close(): void {
    this.closed = true;
    for (const u of this.unfinished.values()) if (u.timer) clearTimeout(u.timer);
    this.journal.close();
  }

  private rows(): JournalRow[] {
    return this.journal.prepare<[], JournalRow>('SELECT id, team, reason, source, key_name, sealed, started_at, step FROM erasures ORDER BY started_at').all();
  }

  private contextOf(row: JournalRow): WriteContext {
    return { team: row.team, source: row.source, keyName: row.key_name, correlationId: `erasure-${row.id}`, now: new Date() };
  }

  /**
   * One attempt at an unfinished erasure, in its turn; one at a time per erasure, so a second
   * request joins the first's. A failure schedules the next attempt (its delay doubling up to the
   * cap) and answers ErasurePending.
   */
  private attempt(u: Unfinished, ctx: WriteContext): Promise<{ PkConstituent: number; erasedAt: string }> {
    if (u.running) return u.running;
    if (u.timer) clearTimeout(u.timer);
    u.timer = null;
    const running = this.inTurn(() => this.finish(u.row, ctx)).then(
      (done) => {
        this.unfinished.delete(u.row.id);
        return done;
      },
      (err: unknown) => {
        u.failures++;
        const failed = WORK[nextStep(u.row.step)];
        u.lastError = scrubbedError(err, this.valuesOf(u.row, []));
        const delay = backoffDelay(this.retry, u.failures);
        u.nextAt = Date.now() + delay;
        this.s.report(
          `erasure: attempt ${u.failures} at the erasure of constituent ${u.row.id} (team ${u.row.team}) failed at ${failed}: ${u.lastError}; trying again in ${Math.ceil(delay / 1000)} s`,
        );
        if (!this.closed) {
          u.timer = setTimeout(() => {
            u.timer = null;
            if (!this.closed) void this.attempt(u, this.contextOf(u.row)).catch(() => undefined);
          }, delay);
          // The server keeps the process alive; a timer alone must not (a CLI, a test's end).
          u.timer.unref();
        }
        throw new ErasurePending(u.row.id, failed, Math.max(1, Math.ceil(delay / 1000)));
      },
    );
    u.running = running.finally(() => {
      u.running = null;
    });
    // The answer is the caller's; joiners share it and none leaves a rejection unhandled.
    u.running.catch(() => undefined);
    return u.running;
  }

  /**
   * The delivery records of the person's messages (`notification-<id>` streams) whose error names
   * one of the values, rewritten where the log allows (the embedded one): a mail server's refusal
   * named the recipient before the sender took it out (commands/notifications/sender.ts). Their
   * documents in the outbox lose the error as the projector applies ConstituentErased
   * (projections/outbox.ts); on EventStoreDB the old events stay as written.
   */
  private async scrubDeliveryRecords(id: number, values: string[]): Promise<void> {
    const { log, store } = this.s.deps;
    if (!log.rewriteStream) return;
    const scrub = scrubText(values);
    const named = (e: RecordedEvent) => typeof e.data.error === 'string' && scrub(e.data.error) !== e.data.error;
    // By the constituent each message records, as the outbox's erasure does (a volunteer record deleted before still had them).
    const messages = await store.find<Doc>({ collection: NOTIFICATIONS, filter: eq('_constituent', id) });
    for (const n of messages.items) {
      const stream = notificationStream(String(n.id));
      if (!(await log.readStream(stream)).some(named)) continue;
      try {
        await log.rewriteStream(stream, (e) => (named(e) ? { ...e.data, error: scrub(e.data.error as string) } : e.data));
      } catch (err) {
        // EventStoreDB: the record stays as written (README), which the erasure must not wait on.
        if (!(err instanceof StreamNotRewritable)) throw err;
        this.s.report(`erasure: the delivery record of message ${String(n.id)} names a value of constituent ${id}, and this log cannot rewrite it`);
      }
    }
  }

  private valuesOf(row: JournalRow, otherwise?: string[]): string[] {
    try {
      return JSON.parse(this.s.mainSealer.openText(row.sealed, `erasure:${row.id}`)) as string[];
    } catch (err) {
      if (otherwise) return otherwise;
      throw err;
    }
  }

  private async finish(row: JournalRow, ctx: WriteContext): Promise<{ PkConstituent: number; erasedAt: string }> {
    const { deps } = this.s;
    const stream = constituentStream(row.id);
    // The steps an earlier attempt (or run) finished are not done again.
    const due = (step: Step) => STEPS.indexOf(step) > (row.step ? STEPS.indexOf(row.step) : 0);
    if (due('prepared')) {
      if (this.s.readModelsFile) {
        // Read models built beside the live ones hold the person too: a prepare's for the next
        // release (which stops once it sees the journal's row), a rebuild's that was killed.
        await discardPrepared(this.s.dataDir, this.s.report);
        removeRebuildLeftovers(this.s.dataDir, this.s.report);
      }
      this.step(row, 'prepared');
    }
    // Already recorded, this appends nothing and answers the first erasure's time.
    const { erasedAt } = await eraseConstituent(deps, ctx, row.id, row.reason);
    if (due('recorded')) this.step(row, 'recorded');
    const values = this.valuesOf(row);
    if (due('log')) {
      await deps.log.rewriteStream!(stream, erasedData);
      forgetRecordStream(deps.log, stream);
      this.step(row, 'log');
    }
    const stale = mentionsAny(values);
    const rebuild = envelopeRebuilder(deps.log, row.team);
    // Every change projected so far is in the stores scanned below, built as the log stood then.
    if (due('feed') || due('queue')) await deps.settle(await deps.log.head());
    if (due('feed')) {
      const positions = (await deps.log.readStream(stream)).map((e) => e.position.prepare);
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
      this.step(row, 'feed');
    }
    if (due('queue')) {
      if (this.s.webhookDb) {
        await purgeQueuedBodies(this.s.webhookDb, row.team, stale, rebuild);
        await truncateWal(this.s.webhookDb);
      }
      // A queue whose bodies cannot be rewritten (NATS JetStream; the embedded one is purged
      // above): each is built again at its next attempt instead. Its server out of reach fails
      // the step, which is tried again.
      const queue = this.s.queue ? await this.s.queue() : null;
      if (queue?.noteErasure) {
        const [erased] = (await deps.log.readStreamBackwards?.(stream, 1)) ?? (await deps.log.readStream(stream)).slice(-1);
        if (erased) await queue.noteErasure(row.team, erased.position.prepare);
      }
      this.step(row, 'queue');
    }
    if (due('answers')) {
      await this.s.idempotency.redact?.(namesAnyInAnyCase(values), redactAnswer(new Set(values)));
      this.step(row, 'answers');
    }
    if (due('mail')) {
      await scrubMail(path.join(this.s.dataDir, 'outbox'), values);
      await this.scrubDeliveryRecords(row.id, values);
      this.step(row, 'mail');
    }
    if (this.s.readModelsFile) {
      if (due('search-index')) {
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
        this.step(row, 'search-index');
      }
      // The merge rewrote the index into the WAL: copying it back is off the main thread too.
      await truncateWalOffThread(this.s.readModelsFile);
    }
    this.step(row, 'read-models');
    this.journal.prepare('DELETE FROM erasures WHERE id = ?').run(row.id);
    await truncateWal(this.journal);
    return { PkConstituent: row.id, erasedAt };
  }

  private inTurn<T>(run: () => Promise<T>): Promise<T> {
    const mine = this.turn.then(run, run);
    this.turn = mine.catch(() => undefined);
    return mine;
  }

  /** Records a step finished (an attempt after a failure, or the next run, starts after it). */
  private step(row: JournalRow, done: Step): void {
    if (done !== 'journal') this.journal.prepare('UPDATE erasures SET step = ? WHERE id = ?').run(done, row.id);
    row.step = done;
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
    if (Date.now() > until) throw new Error('the read models did not bring their search index up to date in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export const ERASURE_STEPS = STEPS;

import type { RecordedEvent } from '../domain/shared/events.js';
import { type AppendOrder, type AppendResult, WrongExpectedRevision } from './port.js';
import type { Committer } from './sqlite-committer.js';
import { type Given, toRecordedGiven } from './sqlite-file.js';
import type { Followers } from './sqlite-follow.js';
import type { RecentEvents } from './sqlite-recent.js';
import type { Outcome, WireAppend } from './sqlite-wire.js';
import { WriterThread } from './sqlite-writer.js';

interface Pending {
  /** The events serialised when the append is accepted, so one that cannot be fails alone, not its batch. */
  append: WireAppend;
  /** Per event, what of it can be handed to the followers as given (none: every event parsed back). */
  given?: Given[];
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
  /**
   * `held` while the append it must follow (add's `after`) is committed in an earlier commit,
   * `queued` for the next commit, `sent` once in one, `dropped` once failed with the one it
   * follows (`error`: why).
   */
  at: 'held' | 'queued' | 'sent' | 'dropped';
  error?: unknown;
  /** Its answer (add's), for the appends that follow it. */
  answer?: Promise<AppendResult>;
  /** The end of the writer of the append it follows (AppendOrder.settled). */
  settled?: Promise<unknown>;
  /** The appends that must follow this one, added while it was held: queued just after it, or failed with it. */
  followers?: Pending[];
}

/**
 * Batches on the writer thread at once: the one it commits and the next, waiting there so that
 * it starts on it the moment the commit ends. Whatever is accepted meanwhile waits here for the
 * first of them to be answered and then goes as one message, so under load each commit costs one
 * message each way instead of one per turn of the event loop (a structured clone and a wake-up of
 * the thread each).
 */
const SENT_AT_ONCE = 2;

/**
 * Group commit: appends are queued and flushed on the next turn of the event loop in one
 * transaction, so every request that arrived meanwhile shares one fsync. Each append still
 * checks its own expected revision, against the rows earlier appends of the same batch wrote,
 * and fails alone. On the writer thread a batch is sent at once while fewer than SENT_AT_ONCE
 * are there, and the thread commits together whatever batches reached it while it was
 * committing the previous ones, so its transactions grow with the load. In place (an in-memory
 * database, or on request) it commits on this thread.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private flushScheduled = false;
  private readonly writer: WriterThread | null;
  private readonly commitHere: Committer | null;
  /** The batches sent to the writer thread and not answered yet. */
  private readonly committing = new Set<Promise<void>>();
  private answered = 0;
  /** Each append by the answer add gave it, for a later add that must follow it. */
  private readonly byAnswer = new WeakMap<Promise<AppendResult>, Pending>();

  constructor(
    commit: WriterThread | Committer,
    private readonly recent: RecentEvents,
    private readonly followers: Followers,
  ) {
    this.writer = commit instanceof WriterThread ? commit : null;
    this.commitHere = commit instanceof WriterThread ? null : commit;
  }

  /** Appends answered, conflicts included. */
  get appends(): number {
    return this.answered;
  }

  /** Batches on the writer thread, not answered yet. */
  get inFlight(): number {
    return this.committing.size;
  }

  /**
   * Queues an append for the next commit. One that must follow `after` (EventLog.append) goes in
   * the same commit as it while that one is still queued, so that nothing waits and a failed
   * commit fails both; otherwise it is held until `after` is answered (and what must follow it is
   * held with it), then queued, or failed with it: never in a commit of its own that could succeed
   * where the earlier one failed, as the writer thread's next commit could.
   */
  add(append: WireAppend, given?: Given[], order?: AppendOrder): Promise<AppendResult> {
    let entry!: Pending;
    const answer = new Promise<AppendResult>((resolve, reject) => (entry = { append, given, resolve, reject, at: 'held', settled: order?.settled }));
    const after = order?.after;
    const before = after && this.byAnswer.get(after);
    if (this.closed) this.drop(entry, new Error('event log is closed'));
    else if (!after) this.queue(entry);
    // In the same commit as the one it follows, while that one is queued and cannot lose a race
    // there (a new stream: a new record's id is its own): a failed commit fails both. One that
    // could (an update) might fail alone inside the commit while this one is written, so this
    // one waits for its answer.
    else if (before?.at === 'queued' && sameCommit(before)) this.queue(entry);
    else if (before?.at === 'held') (before.followers ??= []).push(entry);
    // The one it follows failed already: so does this one, at once (held, nothing would release it).
    else if (before?.at === 'dropped') this.drop(entry, before.error);
    else this.hold(entry, after, order?.settled);
    // Only an append another will follow is kept track of: a weak map's entry for every write
    // would cost each one, and its garbage collection more.
    if (order?.followed) {
      entry.answer = answer;
      this.byAnswer.set(answer, entry);
    }
    return answer;
  }

  private queue(entry: Pending): void {
    entry.at = 'queued';
    this.pending.push(entry);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * Holds an append until the one it follows, in an earlier commit, is answered: committed, it
   * goes; failed, it fails. Where that one lost a race (WrongExpectedRevision), its writer decides
   * again and appends again: this one waits for that writer's end (`settled`, a batch's item) and
   * goes if it ended well, so it is never written before the append it follows, nor past one
   * that failed in the end (decisions.md §14).
   */
  private hold(entry: Pending, after: Promise<AppendResult>, settled: Promise<unknown> | undefined): void {
    this.held.add(entry);
    const go = () => this.release(entry);
    const fail = (err: unknown) => this.drop(entry, err);
    after.then(go, (err: unknown) => (!(err instanceof WrongExpectedRevision) ? fail(err) : settled ? settled.then(go, fail) : go()));
  }

  /** The append it follows committed (or lost a race, for its writer to decide again): it goes, and what follows it. */
  private release(entry: Pending): void {
    this.held.delete(entry);
    if (this.closed) return this.drop(entry, new Error('event log is closed'));
    this.queue(entry);
    // Those that follow it go in the same commit, or, where it could lose a race there, after it.
    for (const f of entry.followers ?? []) {
      if (sameCommit(entry) || !entry.answer) this.release(f);
      else this.hold(f, entry.answer, f.settled);
    }
    entry.followers = undefined;
  }

  /** The append it follows failed: nothing of it, or of what follows it, is written. */
  private drop(entry: Pending, err: unknown): void {
    this.held.delete(entry);
    entry.at = 'dropped';
    entry.error = err;
    entry.reject(new Error(`not appended to ${entry.append.stream}: an append it follows failed`, { cause: err }));
    for (const f of entry.followers ?? []) this.drop(f, err);
    entry.followers = undefined;
  }

  /** Appends held behind another, in an earlier commit (hold). */
  private readonly held = new Set<Pending>();
  /** close() has ended: an append added or released now fails. */
  private closed = false;

  /**
   * Sends whatever was accepted, at once, and resolves once all of it is answered: appends held
   * behind another go as soon as that one is answered, so this waits for them too, commit after
   * commit, while only the log's own answers hold them; one that waits on its writer's end (a
   * race lost before it) fails instead, as its writer may wait on what closes with the log.
   */
  async close(): Promise<void> {
    for (;;) {
      this.flush(true);
      await Promise.all(this.committing);
      await new Promise((resolve) => setImmediate(resolve));
      if (!this.pending.length && !this.committing.size) break;
    }
    this.closed = true;
    for (const entry of [...this.held]) this.drop(entry, new Error('event log is closed'));
  }

  private flush(now = false): void {
    this.flushScheduled = false;
    // SENT_AT_ONCE out already: this goes when the first of them is answered (sendWaiting).
    if (!now && this.writer && this.committing.size >= SENT_AT_ONCE) return;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    for (const p of batch) p.at = 'sent';
    const appends = batch.map((p) => p.append);
    if (this.writer) {
      // The thread puts whatever reaches it while it commits into its next commit.
      let sent: ReturnType<typeof this.writer.commit>;
      try {
        sent = this.writer.commit(appends);
      } catch (err) {
        // Not sent (the batch could not be encoded): it fails alone, and nothing of it is durable.
        this.failed(batch, err);
        return;
      }
      const done: Promise<void> = sent
        .then(
          (outcomes) => {
            // What waited for this answer goes before the answers are taken in, so the thread
            // has it by the time it ends the commit it is on.
            this.sendWaiting(done);
            this.committed(batch, outcomes);
          },
          (err) => {
            this.sendWaiting(done);
            this.failed(batch, err);
          },
        )
        // Whatever went wrong after the commit, no append is left waiting (settled ones stay so).
        .catch((err) => this.failed(batch, err));
      this.committing.add(done);
      void done.then(() => this.sendWaiting(done));
      return;
    }
    let outcomes: Outcome[];
    try {
      outcomes = this.commitHere!(appends);
    } catch (err) {
      this.failed(batch, err);
      return;
    }
    this.committed(batch, outcomes);
  }

  /** A batch was answered: the appends accepted while SENT_AT_ONCE were out go now. */
  private sendWaiting(answered: Promise<void>): void {
    if (!this.committing.delete(answered)) return;
    if (this.pending.length && !this.flushScheduled) this.flush();
  }

  /** The commit itself failed (disk full, I/O error): nothing of the batch is durable. */
  private failed(batch: Pending[], err: unknown): void {
    for (const p of batch) p.reject(err);
  }

  private committed(batch: Pending[], outcomes: Outcome[]): void {
    this.answered += batch.length;
    const written: RecordedEvent[] = [];
    batch.forEach((p, i) => {
      const o = outcomes[i];
      const { stream, events, expected } = p.append;
      if ('conflict' in o) {
        p.reject(new WrongExpectedRevision(stream, expected, o.actual));
        return;
      }
      // The append's events took consecutive positions and revisions, ending at these.
      // What a read of the file would give, without parsing back what was given here.
      const n = BigInt(events.length);
      events.forEach((e, k) => {
        const back = n - 1n - BigInt(k);
        written.push(toRecordedGiven({ position: o.position - back, stream, revision: o.revision - back, type: e.type, data: e.data, metadata: e.metadata }, p.given?.[k]));
      });
    });
    this.recent.remember(written);
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (!('conflict' in o)) p.resolve({ nextExpectedRevision: o.revision, position: { commit: o.position, prepare: o.position } });
    });
    this.followers.wake();
  }
}

/** Whether an append that another follows may share that one's commit: only one that cannot lose a race there (a new stream). */
const sameCommit = (before: Pending): boolean => before.append.expected === 'no_stream';

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
   * `queued` for the next commit, `sent` once in one.
   */
  at: 'held' | 'queued' | 'sent';
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
    const answer = new Promise<AppendResult>((resolve, reject) => (entry = { append, given, resolve, reject, at: 'held' }));
    const after = order?.after;
    const before = after && this.byAnswer.get(after);
    if (!after || before?.at === 'queued') this.queue(entry);
    else if (before?.at === 'held') (before.followers ??= []).push(entry);
    else after.then(() => this.release(entry), (err: unknown) => (err instanceof WrongExpectedRevision ? this.release(entry) : this.drop(entry, err)));
    // Only an append another will follow is kept track of: a weak map's entry for every write
    // would cost each one, and its garbage collection more.
    if (order?.followed) this.byAnswer.set(answer, entry);
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

  /** The append it follows committed (or lost a race, for its writer to decide again): it goes, and what follows it. */
  private release(entry: Pending): void {
    this.queue(entry);
    for (const f of entry.followers ?? []) this.release(f);
    entry.followers = undefined;
  }

  /** The append it follows failed: nothing of it, or of what follows it, is written. */
  private drop(entry: Pending, err: unknown): void {
    entry.reject(new Error(`not appended to ${entry.append.stream}: an append it follows failed`, { cause: err }));
    for (const f of entry.followers ?? []) this.drop(f, err);
    entry.followers = undefined;
  }

  /** Sends whatever was accepted, at once, and resolves once all of it is answered. */
  async close(): Promise<void> {
    this.flush(true);
    await Promise.all(this.committing);
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

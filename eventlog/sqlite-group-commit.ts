import type { RecordedEvent } from '../domain/shared/events.js';
import { type AppendResult, WrongExpectedRevision } from './port.js';
import type { Committer } from './sqlite-committer.js';
import { toRecorded } from './sqlite-file.js';
import type { Followers } from './sqlite-follow.js';
import type { RecentEvents } from './sqlite-recent.js';
import type { Outcome, WireAppend } from './sqlite-wire.js';
import { WriterThread } from './sqlite-writer.js';

interface Pending {
  /** The events serialised when the append is accepted, so one that cannot be fails alone, not its batch. */
  append: WireAppend;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

/**
 * Group commit: appends are queued and flushed on the next turn of the event loop in one
 * transaction, so every request that arrived meanwhile shares one fsync. Each append still
 * checks its own expected revision, against the rows earlier appends of the same batch wrote,
 * and fails alone. On the writer thread a batch is sent at once, and the thread commits together
 * whatever batches reached it while it was committing the previous ones, so its transactions
 * grow with the load. In place (an in-memory database, or on request) it commits on this thread.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  private flushScheduled = false;
  private readonly writer: WriterThread | null;
  private readonly commitHere: Committer | null;
  /** The batches sent to the writer thread and not answered yet. */
  private readonly committing = new Set<Promise<void>>();
  /**
   * Of those, the ones not yet committed: while there are none, the thread holds no write lock on
   * the log, even as its after-commit work (the inline projection, on another file) runs on.
   */
  private notLogged = 0;
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  private answered = 0;

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

  /** Batches on the writer thread not committed yet (their after-commit work aside). */
  get notCommitted(): number {
    return this.notLogged;
  }

  /**
   * Resolves once every batch sent to the writer thread is committed (at once when none is), so
   * the thread holds no write lock on the log: its after-commit work may still be running, on
   * another file. The next batch is sent on a later turn of the event loop, never in between.
   */
  idle(): Promise<void> {
    if (this.notLogged === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  add(append: WireAppend): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ append, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Sends whatever was accepted, at once, and resolves once all of it is answered. */
  async close(): Promise<void> {
    this.closed = true;
    this.flush();
    await Promise.all(this.committing);
  }

  private flush(): void {
    this.flushScheduled = false;
    // Someone waits for the writer thread to be idle (webhook bookkeeping on this file): hold the
    // next batch until it has had its turn, or under steady load it might never come.
    if (this.writer && this.idleWaiters.length > 0 && this.notLogged > 0 && !this.closed) return;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const appends = batch.map((p) => p.append);
    if (this.writer) {
      // Told once, when the thread reports the commit or, at the latest, when the batch is answered.
      let logged = false;
      const onLogged = () => {
        if (logged) return;
        logged = true;
        if (--this.notLogged === 0) this.releaseIdle();
      };
      this.notLogged++;
      // Sent at once: the thread puts whatever reaches it while it commits into its next commit.
      const done: Promise<void> = this.writer
        .commit(appends, onLogged)
        .then(
          (outcomes) => this.committed(batch, outcomes),
          (err) => this.failed(batch, err),
        )
        // Whatever went wrong after the commit, no append is left waiting (settled ones stay so).
        .catch((err) => this.failed(batch, err));
      this.committing.add(done);
      void done.then(() => {
        this.committing.delete(done);
        onLogged();
      });
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

  /** Tells whoever waits for the writer thread to hold no lock, then sends what was held meanwhile. */
  private releaseIdle(): void {
    for (const w of this.idleWaiters.splice(0)) w();
    // After the waiters, which run in the microtasks before this turn ends.
    if (this.pending.length && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
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
      const n = BigInt(events.length);
      events.forEach((e, k) => {
        const back = n - 1n - BigInt(k);
        written.push(toRecorded({ position: o.position - back, stream, revision: o.revision - back, type: e.type, data: e.data, metadata: e.metadata }));
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

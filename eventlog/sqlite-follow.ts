import type { Position, RecordedEvent } from '../domain/shared/events.js';
import { Pause } from './pause.js';
import type { SubscribeOptions, Subscription } from './port.js';
import type { RecentEvents } from './sqlite-recent.js';

/** Where followers read: the log's file on this thread, and whether the log has closed. */
export interface FollowedLog {
  /** Up to `max` events after `after`, from the file. */
  readAfter(after: bigint, max: number): RecordedEvent[];
  isClosed(): boolean;
}

/**
 * The SQLite log's followers (subscribe). Each reads from the file while catching up and, once
 * caught up, takes this log's own commits from memory (RecentEvents) as they are answered; it
 * wakes on a commit, on another process's rows seen by head(), or at its next poll.
 */
export class Followers {
  /** Followers' wake-ups; `fromFile`: another process's rows are there, read the file for them. */
  private readonly listeners = new Set<(fromFile?: boolean) => void>();
  /** Each follower's last position taken: what every one has taken is let go of in memory. */
  private readonly taken = new Set<{ after: bigint }>();

  constructor(
    private readonly log: FollowedLog,
    private readonly recent: RecentEvents,
    private readonly settings: { pollMs: number; batchSize: number },
  ) {}

  /** This log committed (take its events from memory), or, `fromFile`, another process appended. */
  wake(fromFile?: boolean): void {
    for (const l of this.listeners) l(fromFile);
  }

  /** The log closed: every follower wakes to find it so and stops. */
  release(): void {
    this.wake();
    this.listeners.clear();
  }

  /** Lets the events every follower has taken go from memory. */
  private forgetTaken(): void {
    let least: bigint | null = null;
    for (const f of this.taken) if (least === null || f.after < least) least = f.after;
    if (least !== null) this.recent.forget(least);
  }

  follow(from: Position | null, handler: (e: RecordedEvent) => Promise<void> | void, options: SubscribeOptions = {}): Subscription {
    const { log, recent } = this;
    const { pollMs, batchSize } = this.settings;
    let after = from ? from.commit : 0n;
    let stopped = false;
    const pause = new Pause();
    // Set by a wake-up that arrives while the loop is reading, so that it reads again at once.
    let poked = false;
    // Set by a wake-up for another process's rows: the next read is from the file.
    let fileWanted = false;
    // Set by a wake-up for this log's own commit, whose events are in memory before it wakes anyone.
    let committed = false;
    const listener = (fromFile?: boolean) => {
      poked = true;
      if (fromFile) fileWanted = true;
      else committed = true;
      pause.wake();
    };
    this.listeners.add(listener);
    const me = { after };
    this.taken.add(me);
    const loop = (async () => {
      while (!stopped && !log.isClosed()) {
        let rows: RecordedEvent[];
        // Caught up: a short read of the file, or a run from memory to the last event this log
        // committed. Another process's rows after that are found by the next poll, or at once
        // when a read settles to the head (head() wakes the followers to read the file).
        let caughtUp = false;
        poked = false;
        const byCommit = committed && !fileWanted;
        committed = false;
        try {
          const mine = fileWanted ? null : recent.after(after, batchSize);
          fileWanted = false;
          // Woken by a commit of this log whose events an earlier turn of this loop already took:
          // nothing of its own is left, and the file would only give the commits the writer
          // thread has made and not yet answered, parsed a second time when they arrive here.
          // Another process's rows are found by the poll, or by head() (fileWanted), as before.
          if (!mine && byCommit && recent.nothingAfter(after)) {
            rows = [];
            caughtUp = true;
          } else {
            rows = mine ?? log.readAfter(after, batchSize);
            caughtUp = mine ? recent.isLast(mine[mine.length - 1]) : rows.length < batchSize;
          }
        } catch (err) {
          if (log.isClosed()) break;
          options.onError?.(err);
          throw err;
        }
        for (const e of rows) {
          if (stopped) break;
          if (!options.filter || options.filter(e.type)) await handler(e);
          after = e.position.commit;
        }
        if (rows.length > 0) {
          me.after = after;
          this.forgetTaken();
        }
        if (rows.length > 0 && options.onCheckpoint && !stopped) await options.onCheckpoint({ commit: after, prepare: after });
        if (caughtUp && !stopped && !poked) await pause.for(pollMs);
      }
    })();
    loop.catch((err) => options.onError?.(err));
    // A follower that has ended (stopped, failed, or the log closed) holds nothing back.
    const gone = () => {
      this.taken.delete(me);
      this.forgetTaken();
    };
    void loop.then(gone, gone);
    return {
      stop: async () => {
        stopped = true;
        pause.wake();
        this.listeners.delete(listener);
        await loop.catch(() => undefined);
      },
    };
  }
}

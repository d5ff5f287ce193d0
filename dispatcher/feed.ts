import { comparePositions, type Position } from '../domain/shared/events.js';
import { invalidField } from '../domain/shared/errors.js';
import type { EventLog } from '../eventlog/port.js';
import { mayFire } from './catalog.js';
import { envelopesIn } from './envelope.js';
import { ALL, type Cursor, type FeedQuery, type JsonPage, START } from './feed-cursor.js';
import { FeedWaker } from './feed-waker.js';

const within = (at: string, span: FeedQuery['at']) => {
  if (!span) return true;
  const ms = Date.parse(at);
  return ms >= span.from && ms <= span.to;
};

const RECHECK_MS = 25;
const RECHECKS = 20;

/** Events read from the log per look at most; a page maps at most `limit` + 1 envelopes' worth of them. */
const BATCH = 500;

/** Where pages are read when not from the log: a read model of the envelopes, settled to the log's head at each page. */
export interface FeedPages {
  page(team: number, q: FeedQuery): Promise<JsonPage>;
}

/**
 * The change feed (decisions.md §10): a team's webhook envelopes in log order, built by the very
 * code that builds the dispatcher's (envelope.ts), for every change an endpoint subscribed to
 * ["*"] would have received. They are read from the read model a projector keeps of them: on
 * the embedded stack the table the projector thread keeps (feed-table.ts), on the read store
 * (MongoDB, in memory) its collection (feed-model.ts); webhook replays read the same. Built from
 * the team's own events at each read (EventLog.readTeam) only where there is neither.
 */
export class ChangeFeed {
  private readonly waker: FeedWaker;
  private closing = false;
  private closeNow: () => void = () => undefined;
  /** Resolves when the feed closes: pending polls stop waiting. */
  private readonly closed = new Promise<void>((resolve) => (this.closeNow = resolve));

  constructor(
    private readonly log: EventLog,
    private readonly table: FeedPages | null = null,
  ) {
    this.waker = new FeedWaker(log);
  }

  /** The cursor of `after=now`: the end of the log as it stands. */
  async now(): Promise<Cursor> {
    const head = await this.log.head();
    if (head && (!this.seenHead || comparePositions(head, this.seenHead) > 0)) this.seenHead = head;
    return head ? { position: head, seen: ALL } : START;
  }

  /** The furthest end of the log this feed has seen: a cursor at or before it is one the log gave. */
  private seenHead: Position | null = null;

  /**
   * Whether a cursor names a place the log has reached: every cursor a page or `after=now` gave
   * does (it names an event, or the end), so one past the end came from elsewhere (another
   * installation, a data dir since restored from an older backup), and reading after it would
   * silently skip every change up to there. The log is asked only for a cursor past the end this
   * feed last saw.
   */
  async reached(cursor: Cursor): Promise<boolean> {
    const p = cursor.position;
    if (p === null || (this.seenHead && comparePositions(p, this.seenHead) <= 0)) return true;
    const head = (await this.now()).position;
    return head !== null && comparePositions(p, head) <= 0;
  }

  /** One page: up to `limit` envelopes after the cursor, the cursor after the last, and whether more follow. */
  page(team: number, q: FeedQuery): Promise<JsonPage> {
    return this.table ? this.table.page(team, q) : this.fromLog(team, q);
  }

  private async fromLog(team: number, q: FeedQuery): Promise<JsonPage> {
    const readTeam = this.log.readTeam?.bind(this.log);
    if (!readTeam) throw invalidField('after', 'This installation\u2019s event log cannot list one team\u2019s changes.');
    const changes: string[] = [];
    let next = q.after;
    let from = q.after.position;
    // The change the cursor stands in may have envelopes still to give: read it again.
    let inclusive = from !== null && q.after.seen < ALL;
    for (;;) {
      // What the page still lacks and one more, to learn whether more follow: a whole batch read
      // past a full page would be parsed (and on a sealed log opened, each event an AES-GCM
      // operation) only to be read again by the next page.
      const want = Math.min(BATCH, q.limit - changes.length + 1);
      const events = await readTeam(team, from, want, inclusive);
      for (const e of events) {
        const last = q.until?.position ? comparePositions(e.position, q.until.position) : -1;
        if (last > 0) return { changes, next, hasMore: false };
        const seen = q.after.position && comparePositions(e.position, q.after.position) === 0 ? q.after.seen : 0;
        if (seen >= ALL || !mayFire(e) || !within(e.metadata.at, q.at)) continue;
        const envelopes = await envelopesIn(this.log, e);
        const end = last === 0 ? Math.min(envelopes.length, q.until!.seen) : envelopes.length;
        for (let i = seen; i < end; i++) {
          if (q.types && !q.types(envelopes[i].type)) continue;
          if (changes.length === q.limit) return { changes, next, hasMore: true };
          changes.push(JSON.stringify(envelopes[i]));
          next = { position: e.position, seen: i + 1 };
        }
      }
      if (events.length < want) return { changes, next, hasMore: false };
      from = events[events.length - 1].position;
      inclusive = false;
    }
  }

  /**
   * A page, waiting up to `waitMs` for a first change when there is none yet: woken by the log's
   * own subscription the moment one of the team's events is written, never by polling.
   */
  async wait(team: number, q: FeedQuery, waitMs: number): Promise<JsonPage> {
    if (waitMs <= 0 || this.closing) return this.page(team, q);
    const deadline = Date.now() + waitMs;
    await this.waker.ready();
    let rechecks = 0;
    for (;;) {
      // Listen before reading, so a change written while the page is read still wakes us.
      const woken = this.waker.next(team);
      const page = await this.page(team, q);
      const left = deadline - Date.now();
      if (page.changes.length || left <= 0 || this.closing) {
        woken.cancel();
        return page;
      }
      // Woken, yet nothing to read: where a team's events are indexed a moment after the append
      // (EventStoreDB's projection), look again shortly, a few times, rather than wait it out.
      const ms = rechecks > 0 ? Math.min(left, RECHECK_MS) : left;
      let wasWoken = false;
      const timer = new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
      await Promise.race([woken.promise.then(() => (wasWoken = true)), timer, this.closed]);
      woken.cancel();
      rechecks = wasWoken ? RECHECKS : Math.max(0, rechecks - 1);
    }
  }

  /** Every page from `from` to `until`, one at a time: an export never holds more than a page. */
  async *pages(team: number, q: Omit<FeedQuery, 'limit'>, pageSize = 1000): AsyncGenerator<string[]> {
    let after = q.after;
    for (;;) {
      const page = await this.page(team, { ...q, after, limit: pageSize });
      if (page.changes.length) yield page.changes;
      if (!page.hasMore) return;
      after = page.next;
    }
  }

  /**
   * Answers every pending long poll at once with what there is (the server stops: a poll must not
   * hold a SIGTERM for its whole `wait`, its client gone or not), then stops listening.
   */
  close(): Promise<void> {
    this.closing = true;
    this.closeNow();
    return this.waker.close();
  }
}

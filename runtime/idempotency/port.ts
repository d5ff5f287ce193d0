/**
 * Idempotency keys (decisions.md §11): the first request with a key runs, and its answer is kept
 * (24 hours) so a repeat answers the same without running again. The store is a port: an
 * embedded SQLite table (sqlite.ts), or a MongoDB collection shared by every API process
 * (mongo.ts). The HTTP rules around it are api/idempotency.ts.
 */

/** The answer kept for replay. */
export interface StoredAnswer {
  status: number;
  body: string;
  /** The answer's headers a replay repeats (content type, ETag). */
  headers: Record<string, string>;
}

export type Begun =
  /**
   * No live entry: this request runs, and must complete(), release() or abandon() it. `earlier`:
   * it took over a running entry whose request ended or died unanswered, and this is that
   * request's mark (begin's), which the takeover keeps.
   */
  | { state: 'started'; earlier?: string }
  /** Another request with the key is running. */
  | { state: 'running'; fingerprint: string }
  | { state: 'done'; fingerprint: string; answer: StoredAnswer };

export interface IdempotencyStore {
  /**
   * Atomically starts a request under (scope, key) unless a live entry has it: an entry lives
   * until `ttlMs` after its start; a running one only while its process lives (the embedded
   * store probes the pid, MongoDB's reads a heartbeat), and at most STALE_MS, or until abandoned.
   * Only a request of the same fingerprint takes over a running entry; another is told it runs.
   * `mark`: kept with the entry, and handed to whoever takes it over (where its write began).
   */
  begin(scope: string, key: string, fingerprint: string, now: number, mark?: string): Promise<Begun>;
  /**
   * complete, release and abandon end the request's take. `startedAt` names it: the `now` its
   * begin was given (every take, a takeover's too, restarts the entry at its own). The entry is
   * ended only while that take holds it, so a late call of a try whose key was taken over since
   * (its background wait ended after STALE_MS) leaves the takeover's entry alone. Absent: whatever
   * take holds the key.
   */
  complete(scope: string, key: string, answer: StoredAnswer, startedAt?: number): Promise<void>;
  /** Forgets a running entry whose answer is not kept (a retry may change it), so a retry runs. */
  release(scope: string, key: string, startedAt?: number): Promise<void>;
  /**
   * Ends a running entry whose request may have written without a kept answer (a 5xx, a write not
   * yet readable): the next begin of the same request takes it over at once, with its mark.
   */
  abandon(scope: string, key: string, startedAt?: number): Promise<void>;
  /**
   * Replaces the stored answers `stale` picks by `redact(body)` and leaves no old copy in the
   * store's files (decisions.md §17 erasure). Answers how many changed.
   */
  redact?(stale: (body: string) => boolean, redact: (body: string) => string): Promise<number>;
  close(): Promise<void>;
}

/** How long answers are kept (decisions.md §11). */
export const TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A request still "running" after this long is taken to have died with its process: a repeat then
 * runs. Far beyond any request's time-outs (runtime/config.ts connections), so it never cuts in on
 * a live one.
 */
export const STALE_MS = 5 * 60 * 1000;

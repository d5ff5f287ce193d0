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
  /** No live entry: this request runs, and must complete() or release() it. */
  | { state: 'started' }
  /** Another request with the key is running. */
  | { state: 'running'; fingerprint: string }
  | { state: 'done'; fingerprint: string; answer: StoredAnswer };

export interface IdempotencyStore {
  /**
   * Atomically starts a request under (scope, key) unless a live entry has it: an entry lives
   * until `ttlMs` after its start; a running one only while its process lives (the embedded
   * store probes the pid, MongoDB's reads a heartbeat), and at most STALE_MS.
   */
  begin(scope: string, key: string, fingerprint: string, now: number): Promise<Begun>;
  complete(scope: string, key: string, answer: StoredAnswer): Promise<void>;
  /** Forgets a running entry whose answer is not kept (a retry may change it), so a retry runs. */
  release(scope: string, key: string): Promise<void>;
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

import { DomainError } from '../domain/shared/errors.js';
import type { RetryPolicy } from '../eventlog/backoff.js';
import type { FollowerStatus } from '../eventlog/follower.js';
import { escapeRegex } from '../projections/store/mongo-search.js';

/**
 * An erasure that failed at run time (the change feed's rewrite threw, or kept meeting new blocks
 * under a busy projector) is this process's own to finish (runtime/erasure.ts): it tries again,
 * from the step that failed, after a delay that doubles up to a cap, until it is done.
 */

/** The delays between attempts (eventlog/backoff.ts backoffDelay): 1 s after the first failure, doubling up to a minute. */
export const ERASURE_RETRY: RetryPolicy = { initialMs: 1_000, maxMs: 60_000 };

/** What the admin surface shows of an unfinished erasure (GET /admin/v1/erasures). */
export interface PendingErasure {
  PkConstituent: number;
  teamId: number;
  /** `waiting`: a previous run began it, not tried yet here; `running`: an attempt is under way; `retrying`: the last attempt failed, the next is due at nextAttemptAt. */
  state: 'waiting' | 'running' | 'retrying';
  /** Begun by a previous run of the process (found in the journal at start). */
  fromPreviousRun: boolean;
  /** Attempts made by this process that failed. */
  attempts: number;
  /** The last failure, without any of the person's values. */
  lastError: string | null;
  /** The last step finished (runtime/erasure.ts ERASURE_STEPS): the next attempt starts after it. */
  lastStep: string;
  startedAt: string;
  nextAttemptAt: string | null;
}

/**
 * Readiness (decisions.md §1): an unfinished erasure keeps this process not ready, whether a
 * previous run left it (`catching_up` until its first attempt) or an attempt here failed
 * (`reconnecting`, retrying with back-off). Until it is done the change feed, its export and the
 * queued webhook bodies may still hand out values of a record that already reads as erased, so
 * the API does not answer correctly, unlike a delayed webhook (`degraded`); and on a busy
 * process, taking it out of the balancer is what lets a rewrite that kept meeting new blocks
 * finish. Only counts here: /readyz needs no token, so ids and errors are on the admin surface.
 */
export function readinessOf(pending: readonly PendingErasure[]): FollowerStatus | null {
  // One running now for the first time is an ordinary write: it never makes the process not ready.
  const held = pending.filter((p) => p.fromPreviousRun || p.attempts > 0);
  if (!held.length) return null;
  return { name: 'erasures', state: held.some((p) => p.attempts > 0) ? 'reconnecting' : 'catching_up', behind: held.length };
}

/** Values shorter than this are replaced only where they stand alone. */
const SHORT = 4;


/** Longest error text kept: enough for a SQLite or thread error, not a dump. */
const ERROR_CHARS = 300;

/**
 * An attempt's error as it may be logged and shown: what it quotes dropped, and each of the
 * person's values (as written, lower-cased as search text holds it, and JSON-escaped as an
 * envelope holds it) replaced, since an error can name the text it failed on.
 */
export function scrubbedError(err: unknown, values: readonly string[]): string {
  let text = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim() || 'unknown error';
  // What an error quotes (JSON.parse's snippet of the text, its inner quotes unescaped) may hold
  // anyone's values, not only this person's: dropped, first quote to last.
  text = text.replace(/".*"/g, '"…"');
  const forms = new Set(values.flatMap((v) => [v, v.toLowerCase(), JSON.stringify(v).slice(1, -1)]).filter((v) => v.length > 0));
  // Longest first, so a value inside a longer one does not leave the longer one's remainder.
  for (const v of [...forms].sort((a, b) => b.length - a.length)) {
    // A short value (a middle initial) only where it stands alone: inside a word it names nobody,
    // and taking every "a" out of the text would leave nothing to read.
    text = v.length < SHORT ? text.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegex(v)}(?![\\p{L}\\p{N}])`, 'gu'), '[erased]') : text.split(v).join('[erased]');
  }
  return text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS - 1)}…` : text;
}

/**
 * The answer to an erasure whose attempt failed after it was journaled: recorded, and being
 * finished by the process (503 with Retry-After, api/errors.ts), not an opaque 500. The same
 * request repeated joins the attempt under way, or makes the next one at once.
 */
export class ErasurePending extends DomainError {
  constructor(
    id: number,
    failedStep: string,
    override readonly retryAfterSeconds: number,
  ) {
    super(
      'erasure_pending',
      `The erasure of constituent ${id} is recorded but not finished: ${failedStep} failed. This server tries again by itself (next attempt in ${retryAfterSeconds} s) until it is done; repeat this request to finish it or learn that it is done (GET /admin/v1/erasures lists unfinished erasures).`,
    );
  }
}

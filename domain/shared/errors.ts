/**
 * Errors carry a stable code from spec section 7; the API maps codes to statuses in one place
 * (api/errors.ts). Messages say exactly what to fix.
 */
export type ErrorCode =
  | 'invalid_field'
  | 'missing_field'
  | 'unknown_field'
  | 'invalid_json'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'record_protected'
  | 'not_found'
  | 'ambiguous_match'
  | 'not_open'
  | 'task_busy'
  | 'precondition_failed'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_progress'
  | 'payload_too_large'
  | 'rate_limited'
  /** This deployment cannot do it (erasure on a log that cannot rewrite events, decisions.md §17). */
  | 'not_supported'
  /** An erasure journaled but not finished: the process finishes it by itself (decisions.md §17, runtime/erasure.ts). */
  | 'erasure_pending'
  /** A write recorded in the log whose wait for the read models gave up: written, not yet readable (decisions.md §5, §11). */
  | 'write_pending'
  /** A write that lost the append race to other writers of its record for longer than its budget: nothing written (commands/aggregate.ts). */
  | 'record_busy';

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** Seconds after which asking again may answer otherwise (a 503's `Retry-After`), where the error says so. */
  readonly retryAfterSeconds?: number;
}

export const invalidField = (field: string, message: string) => new DomainError('invalid_field', message, field);
export const missingField = (field: string, message = `${field} is required.`) => new DomainError('missing_field', message, field);
export const unknownField = (field: string, message = `${field} is not a writable field of this resource; remove it.`) =>
  new DomainError('unknown_field', message, field);
export const notFound = (what: string, id: number | string) => new DomainError('not_found', `No ${what} with id ${id} in this account.`);
export const recordProtected = (what: string, id: number) =>
  new DomainError('record_protected', `${what} ${id} is locked or view-only; it can be read but not changed.`);

/**
 * `503 record_busy`, with Retry-After: the write kept losing the append race to other writers of
 * the same record past its budget (commands/aggregate.ts); nothing was written, the same request
 * may be sent again as it is.
 */
export class RecordBusy extends DomainError {
  override readonly retryAfterSeconds = 1;

  constructor(message: string) {
    super('record_busy', message);
  }
}

export const recordBusy = () =>
  new RecordBusy('Too many writes to this record at once: this one was not saved (nothing changed). Send the same request again in a second.');

/** decisions.md §11: `If-Match` named another revision than the record's; nothing was written. */
export const preconditionFailed = (current: number) =>
  new DomainError('precondition_failed', `The record is at revision ${current}, not the one If-Match names; read it again (its ETag is "${current}") and retry.`);

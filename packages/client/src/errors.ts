/**
 * Every failed call throws a TurnoutError. An answer of the API carries its status and its
 * `{error: {code, message, field}}`; a call that never got an answer (the network, a time-out)
 * has `status` 0 and `code` `connection_error` or `timeout`, the underlying error as `cause`.
 */
export class TurnoutError extends Error {
  /** The HTTP status, or 0 when no answer came. */
  readonly status: number;
  /** The API's machine code (`invalid_field`, `not_found`, `rate_limited`, ...). */
  readonly code: string;
  /** The field at fault, where the API names one. */
  readonly field: string | undefined;
  /** Seconds the API asked to wait (its `Retry-After`), when it sent one. */
  readonly retryAfter: number | undefined;
  /** The answer's headers (for `RateLimit-*`, say), when there was an answer. */
  readonly headers: Headers | undefined;
  /**
   * A write's Idempotency-Key (createBatch's key for the whole call): giving it to the same call
   * again finishes what failed, with what had committed answered from the API's kept answers.
   */
  readonly idempotencyKey: string | undefined;

  constructor(init: { status: number; code: string; message: string; field?: string; retryAfter?: number; headers?: Headers; idempotencyKey?: string; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'TurnoutError';
    this.status = init.status;
    this.code = init.code;
    this.field = init.field;
    this.retryAfter = init.retryAfter;
    this.headers = init.headers;
    this.idempotencyKey = init.idempotencyKey;
  }

  /** The same error, naming the key a caller repeats the whole call with. */
  withKey(idempotencyKey: string): TurnoutError {
    const { status, code, message, field, retryAfter, headers, cause } = this;
    return new TurnoutError({ status, code, message, field, retryAfter, headers, idempotencyKey, cause: cause ?? this });
  }
}

/** Seconds from a `Retry-After` (whole seconds or an HTTP date) or `RateLimit-Reset` header. */
export function secondsFrom(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** The TurnoutError for a non-2xx answer, whatever its body (a proxy's HTML page included). */
export function errorFromAnswer(status: number, headers: Headers, text: string, idempotencyKey?: string): TurnoutError {
  let error: { code?: unknown; message?: unknown; field?: unknown } | undefined;
  try {
    error = (JSON.parse(text) as { error?: typeof error }).error;
  } catch {
    /* not the API's JSON: described below by its status */
  }
  const retryAfter = secondsFrom(headers.get('retry-after'));
  return new TurnoutError({
    status,
    code: typeof error?.code === 'string' ? error.code : `http_${status}`,
    message: typeof error?.message === 'string' ? error.message : `HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`,
    field: typeof error?.field === 'string' ? error.field : undefined,
    retryAfter,
    headers,
    idempotencyKey,
  });
}

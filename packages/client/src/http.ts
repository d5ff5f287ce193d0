import { errorFromAnswer, secondsFrom, TurnoutError } from './errors.js';

export interface TurnoutOptions {
  /** Where Turnout serves, e.g. `https://turnout.example.org` (`/api/v1` is added unless it is there). */
  baseUrl: string;
  /** An API key of the team (`tko_...`), sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Retries after the first attempt, for answers a retry may change (default 3). */
  maxRetries?: number;
  /** One attempt's time-out in milliseconds (default 30000); a change-feed long-poll adds its `wait`. */
  timeoutMs?: number;
  /** The first back-off delay in milliseconds, doubled on each retry (default 500). */
  retryBaseMs?: number;
  /** The longest back-off delay in milliseconds (default 8000). */
  retryMaxMs?: number;
  /**
   * The longest wait a `Retry-After` or `RateLimit-Reset` may ask for, in seconds (default 60):
   * past it the call fails with the 429 rather than hang, and the caller decides.
   */
  maxRetryAfterSeconds?: number;
  /** A fetch of your own (a proxy agent, a test double); the global one by default. */
  fetch?: typeof fetch;
}

/** What an answer said besides its body: its status and headers, the key the call used. */
export interface ResponseMeta {
  status: number;
  headers: Headers;
  /** The record's revision from the `ETag` (single reads and writes), for `ifMatch`. */
  etag: string | undefined;
  /** The Idempotency-Key the write was sent with (every attempt carried the same one). */
  idempotencyKey: string | undefined;
  /** True when the API answered a retry with the first attempt's kept answer. */
  replayed: boolean;
  /** How many attempts the call took. */
  attempts: number;
}

/** An answer body, with its ResponseMeta as a non-enumerable `lastResponse` (the body stays the API's own). */
export type WithResponse<T> = T & { readonly lastResponse: ResponseMeta };

export type QueryValue = string | number | boolean | null | undefined | readonly (string | number)[];

export interface RequestInit {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  idempotencyKey?: string;
  /** Added to the attempt's time-out (a long-poll's wait). */
  extraTimeoutMs?: number;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', abort);
      resolve();
    }
    function abort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', abort, { once: true });
  });

/** A random UUID v4, from Web Crypto (Node 20 and browsers have it). */
export const uuid = () => globalThis.crypto.randomUUID();

export function queryString(query: Record<string, QueryValue> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

/**
 * Sends requests with the retries decisions §16 asks for: network errors, time-outs, 5xx, 429 and
 * `409 idempotency_key_in_progress` are tried again with exponential back-off and jitter (or the
 * wait the API named); any other 4xx is final. Writes are safe to repeat because each carries one
 * Idempotency-Key for all its attempts, which the API answers from its kept first answer.
 */
export class Requester {
  readonly base: string;
  private readonly o: Required<Omit<TurnoutOptions, 'fetch' | 'baseUrl'>> & { fetch: typeof fetch };

  constructor(options: TurnoutOptions) {
    if (!options?.baseUrl) throw new TypeError('new Turnout({ baseUrl, apiKey }): baseUrl is required');
    if (!options.apiKey) throw new TypeError('new Turnout({ baseUrl, apiKey }): apiKey is required');
    const base = options.baseUrl.replace(/\/+$/, '');
    this.base = base.endsWith('/api/v1') ? base : `${base}/api/v1`;
    this.o = {
      apiKey: options.apiKey,
      maxRetries: options.maxRetries ?? 3,
      timeoutMs: options.timeoutMs ?? 30_000,
      retryBaseMs: options.retryBaseMs ?? 500,
      retryMaxMs: options.retryMaxMs ?? 8_000,
      maxRetryAfterSeconds: options.maxRetryAfterSeconds ?? 60,
      // Bound late, so a fetch patched after construction (tests, polyfills) is the one used.
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    };
  }

  /** Full jitter over an exponential schedule: a random delay up to base * 2^attempt, capped. */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** attempt);
    return ceiling / 2 + (Math.random() * ceiling) / 2;
  }

  async send<T>(init: RequestInit): Promise<WithResponse<T>> {
    const write = init.method !== 'GET';
    const idempotencyKey = write ? (init.idempotencyKey ?? uuid()) : undefined;
    const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${this.o.apiKey}`, ...init.headers };
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
    if (payload !== undefined) headers['content-type'] = 'application/json';
    const url = this.base + init.path + queryString(init.query);
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.o.maxRetries;
      const timeout = AbortSignal.timeout(this.o.timeoutMs + (init.extraTimeoutMs ?? 0));
      const signal = init.signal ? eitherSignal(init.signal, timeout) : timeout;
      let status: number;
      let answerHeaders: Headers;
      let text: string;
      try {
        const res = await this.o.fetch(url, { method: init.method, headers, body: payload, signal, redirect: 'error' });
        status = res.status;
        answerHeaders = res.headers;
        text = await res.text();
      } catch (cause) {
        if (init.signal?.aborted) throw init.signal.reason;
        const timedOut = timeout.aborted;
        if (!last) {
          await sleep(this.backoff(attempt), init.signal);
          continue;
        }
        throw new TurnoutError({
          status: 0,
          code: timedOut ? 'timeout' : 'connection_error',
          message: timedOut
            ? `${init.method} ${init.path}: no answer within ${this.o.timeoutMs} ms (${attempt + 1} attempts)`
            : `${init.method} ${init.path}: ${(cause as Error)?.message ?? cause} (${attempt + 1} attempts)`,
          idempotencyKey,
          cause,
        });
      }
      if (status >= 200 && status < 300) {
        let body: T;
        try {
          body = (text ? JSON.parse(text) : null) as T;
        } catch (cause) {
          throw new TurnoutError({ status, code: 'invalid_response', message: `${init.method} ${init.path}: the answer is not JSON (${text.slice(0, 100)})`, headers: answerHeaders, cause });
        }
        const meta: ResponseMeta = {
          status,
          headers: answerHeaders,
          etag: answerHeaders.get('etag')?.replace(/^W\//, '').replace(/"/g, '') || undefined,
          idempotencyKey,
          replayed: answerHeaders.get('idempotent-replayed') === 'true',
          attempts: attempt + 1,
        };
        if (body !== null && typeof body === 'object') Object.defineProperty(body, 'lastResponse', { value: meta, enumerable: false });
        return body as WithResponse<T>;
      }
      const error = errorFromAnswer(status, answerHeaders, text, idempotencyKey);
      const retryable = status >= 500 || status === 429 || (status === 409 && error.code === 'idempotency_key_in_progress');
      if (!retryable || last) throw error;
      // The API's own wait first: Retry-After, else (for a 429) when the window resets.
      const asked = error.retryAfter ?? (status === 429 ? secondsFrom(answerHeaders.get('ratelimit-reset')) : undefined);
      if (asked !== undefined && asked > this.o.maxRetryAfterSeconds) throw error;
      // A little jitter on top of the API's wait, so clients told the same second do not all return in the same instant.
      const delay = asked !== undefined ? asked * 1000 + Math.random() * Math.min(this.o.retryBaseMs, 1000) : this.backoff(attempt);
      await sleep(delay, init.signal);
    }
  }
}

/**
 * A signal aborted when either is, with the first one's reason: AbortSignal.any where the runtime
 * has it (Node 20.3+, browsers since 2023), else made here, so the SDK runs on every Node 20.
 */
export function eitherSignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const any = (AbortSignal as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  if (any) return any.call(AbortSignal, [a, b]);
  for (const s of [a, b]) if (s.aborted) return AbortSignal.abort(s.reason);
  const both = new AbortController();
  const abort = (s: AbortSignal) => () => {
    a.removeEventListener('abort', onA);
    b.removeEventListener('abort', onB);
    both.abort(s.reason);
  };
  const onA = abort(a);
  const onB = abort(b);
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return both.signal;
}

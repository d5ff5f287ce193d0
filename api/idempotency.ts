import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { idempotencyRef, type KeyedWrite } from '../commands/resume.js';
import { DomainError, invalidField } from '../domain/shared/errors.js';
import { type Position, positionFromString, positionToString } from '../domain/shared/events.js';
import { Backoff } from '../eventlog/backoff.js';
import { type IdempotencyStore, STALE_MS, type StoredAnswer } from '../runtime/idempotency/port.js';
import { errorOf, httpStatus, sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's writes resume from a journal of their own under a key (a batch: commands/batch.ts), not as a single write. */
    journaled?: boolean;
  }
  interface FastifyRequest {
    idempotent?: Held;
    /** The text of a body the JSON parser refused (api/json-body.ts): its 400 is kept under a key too. */
    refusedBody?: string;
  }
}

/** The key a request runs under. */
interface Held {
  scope: string;
  key: string;
  /** When its take began: what names it to the store (port.ts), so a late end of this try ends no later take. */
  startedAt: number;
  /** Where the request's write is resumable (/api/v1): what its commands stamp and look for. */
  write?: KeyedWrite;
  /**
   * A batch, which keeps its own journal under the key (commands/batch.ts): a retry answers the
   * items committed under the key from it, by their index, whatever its body.
   */
  journaled?: boolean;
  /** Its write committed up to here and was not readable in time (api/write-pending.ts). */
  pending?: Position;
}

/**
 * Where a keyed write can be resumed by its retry (/api/v1's single writes, commands/resume.ts):
 * the log's head, kept with the key when it is taken, and the wait for the read models.
 */
export interface Resumable {
  head(): Promise<Position | null>;
  settle(position: Position): Promise<void>;
}

/** The log and read-your-writes wait of the runtime, as a Resumable. */
export const resumableOf = (services: { log: { head(): Promise<Position | null> }; settle(position: Position): Promise<void> }): Resumable => ({
  head: () => services.log.head(),
  settle: (position) => services.settle(position),
});

/** A take's mark: the log's head when it began ('-': an empty log). */
const markOf = (head: Position | null) => (head ? positionToString(head) : '-');
const fromMark = (mark: string): Position | null => (mark === '-' ? null : positionFromString(mark));

/** A test's fault point: the process dies once a keyed write has committed, before its answer is kept (tests/api/idempotency-resume-crash.test.ts). */
const KILL_BEFORE_KEEPING = process.env.TURNOUT_TEST_KILL_BEFORE_KEEPING === '1';

const HEADER = 'idempotency-key';
const METHODS = new Set(['POST', 'PATCH']);
/** 1..255 printable ASCII (decisions.md §11). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
const REUSED = 'This Idempotency-Key was used for another request (method, path or body); use a new key for a new request.';
const IN_PROGRESS = 'A request with this Idempotency-Key is still running; retry once it has answered.';
/** The answer's headers a replay repeats. */
const REPLAYED_HEADERS = ['content-type', 'etag', 'location'];

/** The answer as kept for a replay: status, body and the headers a replay repeats. */
function answerOf(reply: FastifyReply, body: string): StoredAnswer {
  const headers: Record<string, string> = {};
  for (const h of REPLAYED_HEADERS) {
    const v = reply.getHeader(h);
    if (v !== undefined) headers[h] = String(v);
  }
  return { status: reply.statusCode, body, headers };
}

/** The same JSON value whatever its key order and spacing: keys sorted at every depth. */
export function canonical(value: unknown): string {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    // An object of texts, numbers, booleans and nulls (a batch's items, most bodies): its sorted
    // keys as JSON.stringify's list of keys write the same text, in one call, where a string
    // per key and value was a batch's second most allocated a row.
    const keys = Object.keys(value);
    if (keys.every((k) => flat((value as Record<string, unknown>)[k]))) return JSON.stringify(value, sortInPlace(keys));
  }
  return nested(value);
}

/**
 * Array.prototype.sort's order for texts (by UTF-16 code units), by insertion: a body's few keys
 * in place, where the built-in sort allocated its work arrays at every item of a batch. Many keys
 * (a body made to be slow to sort) go to the built-in sort.
 */
function sortInPlace(keys: string[]): string[] {
  if (keys.length > 32) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i];
    let j = i - 1;
    for (; j >= 0 && keys[j] > k; j--) keys[j + 1] = keys[j];
    keys[j + 1] = k;
  }
  return keys;
}

const flat = (v: unknown): boolean => v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

function nested(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

const fingerprintOf = (request: FastifyRequest) =>
  createHash('sha256').update(`${request.method} ${request.url}\n${canonical(request.body ?? null)}`).digest('hex');

/** A refused body's: its text as sent (never the text of a JSON value, so never a parsed body's). */
const refusedFingerprintOf = (request: FastifyRequest, text: string) =>
  createHash('sha256').update(`${request.method} ${request.url}\nrefused:${text}`).digest('hex');

/** Answers a retry may change are not kept (decisions.md §11): 5xx, 429, 412 and 409 task_busy. */
export function kept(status: number, body: string): boolean {
  if (status >= 500 || status === 429 || status === 412) return false;
  if (status === 409) {
    try {
      return JSON.parse(body)?.error?.code !== 'task_busy';
    } catch {
      return true;
    }
  }
  return true;
}

/**
 * `Idempotency-Key` on /api/v1 POST and PATCH (decisions.md §11), scoped to the API key. As a
 * preValidation hook, after authentication (the scope) with the body parsed, before validation,
 * so a 400 the first request got is kept and replayed like any other answer.
 */
export function idempotencyHooks(store: IdempotencyStore, scopeOf: (request: FastifyRequest) => string, resumable?: Resumable) {
  // The background waits of writes answered 503 write_pending: stopped at the server's close,
  // which leaves their keys to the retry as a wait that gave up does.
  const closing = new AbortController();
  const waiting = new Set<Promise<void>>();

  const begin = async (request: FastifyRequest, reply: FastifyReply, raw: string | string[]) => {
    const key = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!VALID_KEY.test(key)) return sendError(reply, invalidField('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.'));
    const scope = scopeOf(request);
    const fingerprint = fingerprintOf(request);
    // A batch resumes from its own journal: no mark, no ref (commands/batch.ts).
    const resumes = resumable && !request.routeOptions.config.journaled ? resumable : undefined;
    // Read before the take, so every event the write appends lies after it.
    const mark = resumes ? markOf(await resumes.head()) : undefined;
    const startedAt = Date.now();
    const begun = await store.begin(scope, key, fingerprint, startedAt, mark);
    if (begun.state === 'started') {
      request.idempotent = { scope, key, startedAt, journaled: request.routeOptions.config.journaled === true };
      if (resumes) {
        request.idempotent.write = { ref: idempotencyRef(scope, key) };
        // A takeover: the earlier try may have written; the write looks for it before writing.
        // Its scan ends at the head read once the key is taken: every append of the earlier try lies before.
        if (begun.earlier !== undefined) request.idempotent.write.earlier = { from: fromMark(begun.earlier), to: await resumes.head() };
      }
      return;
    }
    if (begun.fingerprint !== fingerprint) return sendError(reply, new DomainError('idempotency_key_reused', REUSED));
    if (begun.state === 'running') return sendError(reply, new DomainError('idempotency_key_in_progress', IN_PROGRESS));
    return replay(reply, begun.answer);
  };

  const complete = async (request: FastifyRequest, reply: FastifyReply, payload: unknown, held: Held) => {
    request.idempotent = undefined;
    if (typeof payload === 'string' && kept(reply.statusCode, payload)) {
      if (KILL_BEFORE_KEEPING && request.written?.position) process.kill(process.pid, 'SIGKILL');
      await store.complete(held.scope, held.key, answerOf(reply, payload), held.startedAt);
      // Answered from what an earlier try wrote: a repeat, as a replay is.
      if (held.write?.replayed) reply.header('Idempotent-Replayed', 'true');
    } else if (held.pending && resumable) {
      // Written, not yet readable: the key stays running (a retry is 409) until the write is
      // readable, then is left for the retry to take over and answer from the write. Given up
      // (still not readable after the stale time), it is left all the same: the retry waits itself.
      const wait: Promise<void> = untilReadable(resumable, held.pending, closing.signal)
        .catch(() => undefined)
        .then(() => store.abandon(held.scope, held.key, held.startedAt))
        .catch(() => undefined)
        .finally(() => waiting.delete(wait));
      waiting.add(wait);
    } else await ended(held, reply.statusCode);
    return payload;
  };

  /**
   * A keyed request that answered no kept answer: one that may have written (a 5xx, or no answer
   * at all, after it handed an append to the log or took over a try that may have) leaves its key
   * for the next try to take over at once and resume (abandon); else the key is forgotten and a
   * retry runs afresh, with any body (release). A batch's 5xx always leaves it: its journal, which
   * the batch may have begun, answers the next try's items by index, so only the same body may
   * take the key over (another is 422).
   */
  const ended = (held: Held, status: number | null) =>
    (status === null || status >= 500) && (held.journaled || (resumable && (held.write?.handed || held.write?.earlier)))
      ? store.abandon(held.scope, held.key, held.startedAt)
      : store.release(held.scope, held.key, held.startedAt);

  // Callback hooks: a request without a key (every GET, most writes) passes each of them without
  // a promise; one with a key returns the promise of its step, which Fastify awaits as an async hook's.
  const preValidation = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): Promise<unknown> | undefined => {
    const raw = METHODS.has(request.method) ? request.headers[HEADER] : undefined;
    if (raw !== undefined) return begin(request, reply, raw);
    done();
    return undefined;
  };

  /**
   * A keyed request whose body the parser refused (its 400 sent before preValidation): the answer
   * is kept as any 4xx is (decisions.md §11), so the same text again is replayed, and another body
   * under the key is 422. Answers refused before a body is read (413, 415) have no body to
   * compare, and are not kept.
   */
  const refused = async (request: FastifyRequest, reply: FastifyReply, payload: unknown, raw: string | string[], text: string): Promise<unknown> => {
    const key = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!VALID_KEY.test(key) || typeof payload !== 'string' || !kept(reply.statusCode, payload)) return payload;
    const scope = scopeOf(request);
    const startedAt = Date.now();
    const begun = await store.begin(scope, key, refusedFingerprintOf(request, text), startedAt);
    if (begun.state === 'started') {
      await store.complete(scope, key, answerOf(reply, payload), startedAt);
      return payload;
    }
    const error = (code: 'idempotency_key_reused' | 'idempotency_key_in_progress', message: string) => {
      const e = new DomainError(code, message);
      reply.code(httpStatus(e));
      return JSON.stringify({ error: errorOf(e) });
    };
    if (begun.fingerprint !== refusedFingerprintOf(request, text)) return error('idempotency_key_reused', REUSED);
    if (begun.state === 'running') return error('idempotency_key_in_progress', IN_PROGRESS);
    for (const [h, v] of Object.entries(begun.answer.headers)) reply.header(h, v);
    reply.code(begun.answer.status).header('Idempotent-Replayed', 'true');
    return begun.answer.body;
  };

  const onSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): Promise<unknown> | undefined => {
    const held = request.idempotent;
    if (held) return complete(request, reply, payload, held);
    const raw = request.refusedBody !== undefined && METHODS.has(request.method) ? request.headers[HEADER] : undefined;
    if (raw !== undefined) return refused(request, reply, payload, raw, request.refusedBody!);
    done(null, payload);
    return undefined;
  };

  // A request that ends without an answer (the client went away mid-handler) frees its key, or
  // leaves it to be resumed where it may have written.
  const onResponse = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): Promise<void> | undefined => {
    const held = request.idempotent;
    if (held) return ended(held, null);
    done();
    return undefined;
  };

  const onClose = async () => {
    closing.abort();
    await Promise.all(waiting);
  };

  return { preValidation, onSend, onResponse, onClose };
}

/**
 * Resolves once the read models hold `position`, waiting again after each time-out; gives up (as
 * the key's stale time lets a retry take it over anyway) after STALE_MS, or at once on `stop`.
 */
async function untilReadable(resumable: Resumable, position: Position, stop: AbortSignal): Promise<void> {
  let onStop = () => {};
  const stopped = new Promise<never>((_, reject) => (onStop = () => reject(new Error('the server closed'))));
  stopped.catch(() => undefined);
  stop.addEventListener('abort', onStop, { once: true });
  try {
    const deadline = Date.now() + STALE_MS;
    for (const backoff = new Backoff({ initialMs: 100, maxMs: 5_000 }); ; ) {
      stop.throwIfAborted();
      try {
        return await Promise.race([resumable.settle(position), stopped]);
      } catch (err) {
        if (stop.aborted || Date.now() > deadline) throw err;
        await Promise.race([new Promise((r) => setTimeout(r, backoff.next()).unref()), stopped]);
      }
    }
  } finally {
    stop.removeEventListener('abort', onStop);
  }
}

function replay(reply: FastifyReply, answer: StoredAnswer): FastifyReply {
  for (const [h, v] of Object.entries(answer.headers)) reply.header(h, v);
  // A string body with its content type is sent as it was serialised, byte for byte.
  return reply.code(answer.status).header('Idempotent-Replayed', 'true').send(answer.body);
}

/**
 * The admin writes' Idempotency-Key (decisions.md §9, §17): as on /api/v1 (§11), but scoped to the
 * team of the path, so `turnout import` and `turnout erase` can run again safely. Path parameters
 * are still text before validation; the scope is the team's number. With `resumable`, a single
 * write is resumed by its retry as on /api/v1; without, a retry runs it again (an erasure, which
 * its journal answers the same).
 */
export function useTeamIdempotency(app: FastifyInstance, store: IdempotencyStore, resumable?: Resumable): void {
  const idempotency = idempotencyHooks(store, (request) => `team:${Number((request.params as { teamId?: string }).teamId)}`, resumable);
  app.addHook('preValidation', idempotency.preValidation);
  app.addHook('onSend', idempotency.onSend);
  app.addHook('onResponse', idempotency.onResponse);
  app.addHook('onClose', idempotency.onClose);
}

import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { DomainError, invalidField } from '../domain/shared/errors.js';
import type { IdempotencyStore, StoredAnswer } from '../runtime/idempotency/port.js';
import { sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotent?: { scope: string; key: string };
  }
}

const HEADER = 'idempotency-key';
const METHODS = new Set(['POST', 'PATCH']);
/** 1..255 printable ASCII (decisions.md §11). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
/** The answer's headers a replay repeats. */
const REPLAYED_HEADERS = ['content-type', 'etag', 'location'];

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
export function idempotencyHooks(store: IdempotencyStore, scopeOf: (request: FastifyRequest) => string) {
  const begin = async (request: FastifyRequest, reply: FastifyReply, raw: string | string[]) => {
    const key = Array.isArray(raw) ? raw.join(', ') : raw;
    if (!VALID_KEY.test(key)) return sendError(reply, invalidField('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters.'));
    const scope = scopeOf(request);
    const fingerprint = fingerprintOf(request);
    const begun = await store.begin(scope, key, fingerprint, Date.now());
    if (begun.state === 'started') {
      request.idempotent = { scope, key };
      return;
    }
    if (begun.fingerprint !== fingerprint)
      return sendError(reply, new DomainError('idempotency_key_reused', 'This Idempotency-Key was used for another request (method, path or body); use a new key for a new request.'));
    if (begun.state === 'running')
      return sendError(reply, new DomainError('idempotency_key_in_progress', 'A request with this Idempotency-Key is still running; retry once it has answered.'));
    return replay(reply, begun.answer);
  };

  const complete = async (request: FastifyRequest, reply: FastifyReply, payload: unknown, held: { scope: string; key: string }) => {
    request.idempotent = undefined;
    if (typeof payload === 'string' && kept(reply.statusCode, payload)) {
      const headers: Record<string, string> = {};
      for (const h of REPLAYED_HEADERS) {
        const v = reply.getHeader(h);
        if (v !== undefined) headers[h] = String(v);
      }
      await store.complete(held.scope, held.key, { status: reply.statusCode, body: payload, headers });
    } else await store.release(held.scope, held.key);
    return payload;
  };

  // Callback hooks: a request without a key (every GET, most writes) passes each of them without
  // a promise; one with a key returns the promise of its step, which Fastify awaits as an async hook's.
  const preValidation = (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): Promise<unknown> | undefined => {
    const raw = METHODS.has(request.method) ? request.headers[HEADER] : undefined;
    if (raw !== undefined) return begin(request, reply, raw);
    done();
    return undefined;
  };

  const onSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void): Promise<unknown> | undefined => {
    const held = request.idempotent;
    if (held) return complete(request, reply, payload, held);
    done(null, payload);
    return undefined;
  };

  // A request that ends without an answer (the client went away mid-handler) frees its key.
  const onResponse = (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): Promise<void> | undefined => {
    const held = request.idempotent;
    if (held) return store.release(held.scope, held.key);
    done();
    return undefined;
  };

  return { preValidation, onSend, onResponse };
}

function replay(reply: FastifyReply, answer: StoredAnswer): FastifyReply {
  for (const [h, v] of Object.entries(answer.headers)) reply.header(h, v);
  // A string body with its content type is sent as it was serialised, byte for byte.
  return reply.code(answer.status).header('Idempotent-Replayed', 'true').send(answer.body);
}

/**
 * The admin writes' Idempotency-Key (decisions.md §9, §17): as on /api/v1 (§11), but scoped to the
 * team of the path, so `turnout import` and `turnout erase` can run again safely. Path parameters
 * are still text before validation; the scope is the team's number.
 */
export function useTeamIdempotency(app: FastifyInstance, store: IdempotencyStore): void {
  const idempotency = idempotencyHooks(store, (request) => `team:${Number((request.params as { teamId?: string }).teamId)}`);
  app.addHook('preValidation', idempotency.preValidation);
  app.addHook('onSend', idempotency.onSend);
  app.addHook('onResponse', idempotency.onResponse);
}

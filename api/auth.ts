import { timingSafeEqual, createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { WriteContext } from '../commands/context.js';
import type { CommandDeps } from '../commands/deps.js';
import { knownApiKey, verifyApiKey } from '../commands/teams.js';
import type { ApiKeyDoc } from '../projections/teams.js';
import { sendError } from './errors.js';
import { TransportError } from './transport.js';
import { MemoryRateLimiter, type RateDecision, type RateLimiter } from '../runtime/ratelimit.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyDoc;
  }
}

// The same answer for a missing, malformed, unknown or revoked key: it tells a guesser nothing.
const UNAUTHORIZED = () =>
  new TransportError('unauthorized', 'Send a valid, unrevoked API key as "Authorization: Bearer <key>".');

export function bearer(request: FastifyRequest): string | null {
  const h = request.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : null;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function rateHeaders(reply: FastifyReply, d: RateDecision): void {
  reply.header('RateLimit-Limit', d.limit).header('RateLimit-Remaining', d.remaining).header('RateLimit-Reset', d.resetSeconds);
  reply.header('RateLimit-Policy', d.policy);
  if (!d.allowed) reply.header('Retry-After', d.retryAfterSeconds);
}

/**
 * Failed authentications per address, so a key cannot be guessed at line speed: below the limit
 * a wrong or missing credential is 401, as the spec says; past it, that address's unauthenticated requests are 429 until the
 * oldest failure in the rolling minute leaves it. Only failures are counted and a valid credential
 * is checked first, so a valid key is never slowed. The answer carries the address's window in
 * the rate-limit headers (decisions.md §4: on every /api/v1 answer). Per process: each API
 * process counts the failures it sees.
 */
export function failedAuthGuard(perMinute: number) {
  const failures = perMinute > 0 ? new MemoryRateLimiter({ perSecond: 0, perMinute }) : null;
  return async (request: FastifyRequest, reply: FastifyReply, unauthorized: TransportError): Promise<FastifyReply> => {
    if (!failures) return sendError(reply, unauthorized);
    const d = await failures.take(`addr:${request.ip}`);
    rateHeaders(reply, d);
    if (d.allowed) return sendError(reply, unauthorized);
    return sendError(reply, new TransportError('rate_limited', `Over ${d.limit} failed authentications from this address in a minute; retry after ${d.retryAfterSeconds} s with a valid credential.`));
  };
}
export type FailedAuthGuard = ReturnType<typeof failedAuthGuard>;

const overLimit = async (reply: FastifyReply, d: RateDecision) =>
  sendError(
    reply,
    new TransportError('rate_limited', `Rate limit exceeded for this key (${d.policy.replace(/;w=/g, ' per ').replace(/ per 1\b/, ' per second').replace(/ per 60\b/, ' per minute')}); retry after ${d.retryAfterSeconds} s.`),
  );

/** /api/v1: authenticate the key, apply its rate limits, then its scope. */
export function apiKeyHook(deps: Pick<CommandDeps, 'store' | 'keyMark'>, limiter: RateLimiter | null, failed: FailedAuthGuard) {
  const check = async (request: FastifyRequest, reply: FastifyReply) => {
    const presented = bearer(request);
    const key = presented ? await verifyApiKey(deps, presented) : null;
    if (!key) return failed(request, reply, UNAUTHORIZED());
    request.apiKey = key;
    if (limiter) {
      const d = await limiter.take(`key:${key.id}`);
      rateHeaders(reply, d);
      if (!d.allowed) return overLimit(reply, d);
    }
    if (WRITE_METHODS.has(request.method) && key.scope !== 'read_write')
      return sendError(reply, new TransportError('insufficient_scope', `The key "${key.name}" is Read only; use a Read & write key to make changes.`));
  };
  // A limiter that answers at once (this process's own, runtime/ratelimit.ts) is asked here.
  const takeNow = limiter?.takeNow ? (key: string) => limiter.takeNow!(key) : null;
  // A key verified before and unchanged since, within its scope and its limits (none, or taken
  // at once), passes without a promise (most requests); anything else takes the whole check.
  return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): Promise<unknown> | undefined => {
    const presented = limiter && !takeNow ? null : bearer(request);
    const key = presented ? knownApiKey(deps, presented) : null;
    if (!key || (key.scope !== 'read_write' && WRITE_METHODS.has(request.method))) return check(request, reply);
    request.apiKey = key;
    if (takeNow) {
      const d = takeNow(`key:${key.id}`);
      rateHeaders(reply, d);
      if (!d.allowed) return overLimit(reply, d);
    }
    done();
    return undefined;
  };
}

/**
 * A write's context as the API edge follows it: what it commits, for its answer should its wait
 * for the read models give up (api/write-pending.ts), and its single write's Idempotency-Key
 * (api/idempotency.ts; a batch route has none: its own journal resumes it).
 */
function withWrite(request: FastifyRequest, ctx: WriteContext): WriteContext {
  if (WRITE_METHODS.has(request.method)) {
    ctx.written = request.written ??= { position: null };
    if (request.idempotent?.write) ctx.idem = request.idempotent.write;
  }
  return ctx;
}

export function apiContext(request: FastifyRequest): WriteContext {
  const key = request.apiKey!;
  // `revisions` collects what each write leaves, for the answer's ETag (api/etag.ts).
  const ctx: WriteContext = { team: key.FkTeam, source: 'Public API', keyName: key.name, correlationId: String(request.id), now: new Date(), revisions: new Map() };
  if (request.span) ctx.trace = request.span;
  return withWrite(request, ctx);
}

export function adminContext(request: FastifyRequest, team: number): WriteContext {
  const ctx: WriteContext = { team, source: 'Application', keyName: null, correlationId: String(request.id), now: new Date(), ...(request.span ? { trace: request.span } : {}) };
  return withWrite(request, ctx);
}

/** /admin/v1: one bearer token, compared in constant time; failures count as for API keys. */
export function adminTokenHook(token: string, failed: FailedAuthGuard) {
  const expected = createHash('sha256').update(token).digest();
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const presented = bearer(request);
    const actual = createHash('sha256').update(presented ?? randomUUID()).digest();
    if (!presented || !timingSafeEqual(expected, actual))
      return failed(request, reply, new TransportError('unauthorized', 'Send the admin token as "Authorization: Bearer <token>".'));
  };
}

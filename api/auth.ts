import { timingSafeEqual, createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WriteContext } from '../commands/context.js';
import type { CommandDeps } from '../commands/deps.js';
import { verifyApiKey } from '../commands/teams.js';
import { DomainError } from '../domain/shared/errors.js';
import type { ApiKeyDoc } from '../projections/teams.js';
import { sendError } from './errors.js';
import type { RateLimiter } from '../runtime/ratelimit.js';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey?: ApiKeyDoc;
  }
}

// The same answer for a missing, malformed, unknown or revoked key: it tells a guesser nothing.
const UNAUTHORIZED = () =>
  new DomainError('unauthorized', 'Send a valid, unrevoked API key as "Authorization: Bearer <key>".');

export function bearer(request: FastifyRequest): string | null {
  const h = request.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : null;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** /api/v1: authenticate the key, apply its rate limits, then its scope. */
export function apiKeyHook(deps: Pick<CommandDeps, 'store'>, limiter: RateLimiter | null) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const presented = bearer(request);
    const key = presented ? await verifyApiKey(deps, presented) : null;
    if (!key) return sendError(reply, UNAUTHORIZED());
    request.apiKey = key;
    if (limiter) {
      const d = await limiter.take(`key:${key.id}`);
      reply.header('RateLimit-Limit', d.limit).header('RateLimit-Remaining', d.remaining).header('RateLimit-Reset', d.resetSeconds);
      reply.header('RateLimit-Policy', d.policy);
      if (!d.allowed) {
        reply.header('Retry-After', d.retryAfterSeconds);
        return sendError(
          reply,
          new DomainError('rate_limited', `Rate limit exceeded for this key (${d.policy.replace(/;w=/g, ' per ').replace(/ per 1\b/, ' per second').replace(/ per 60\b/, ' per minute')}); retry after ${d.retryAfterSeconds} s.`),
        );
      }
    }
    if (WRITE_METHODS.has(request.method) && key.scope !== 'read_write')
      return sendError(reply, new DomainError('insufficient_scope', `The key "${key.name}" is Read only; use a Read & write key to make changes.`));
  };
}

export function apiContext(request: FastifyRequest): WriteContext {
  const key = request.apiKey!;
  return { team: key.FkTeam, source: 'Public API', keyName: key.name, correlationId: String(request.id), now: new Date() };
}

export function adminContext(request: FastifyRequest, team: number): WriteContext {
  return { team, source: 'Application', keyName: null, correlationId: String(request.id), now: new Date() };
}

/** /admin/v1: one bearer token, compared in constant time. */
export function adminTokenHook(token: string) {
  const expected = createHash('sha256').update(token).digest();
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const presented = bearer(request);
    const actual = createHash('sha256').update(presented ?? randomUUID()).digest();
    if (!presented || !timingSafeEqual(expected, actual))
      return sendError(reply, new DomainError('unauthorized', 'Send the admin token as "Authorization: Bearer <token>".'));
  };
}

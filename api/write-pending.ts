import type { FastifyRequest } from 'fastify';
import { DomainError } from '../domain/shared/errors.js';
import type { Position } from '../domain/shared/events.js';
import { NotYetReadable } from '../projections/engine/status.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** A write's last committed append (commands/aggregate.ts handle() tells it): api/auth.ts makes it with the context. */
    written?: { position: Position | null };
  }
}

/** Seconds a client is told to wait before asking again for a write that is recorded but not yet readable. */
export const WRITE_PENDING_RETRY_S = 2;

/**
 * A write whose events are committed but whose wait for the read models (read-your-writes,
 * decisions.md §5) gave up: the projector thread is dead or restarting, the shared read store is
 * slow. It must not answer 2xx (a read right after could miss it), and a plain 500 would have the
 * client write it again: it answers 503 write_pending, "written, not yet readable", with
 * Retry-After. Under a resumable Idempotency-Key the key is kept (api/idempotency.ts) and the
 * retry gets the write's own answer; under another (an erasure's) the retry runs it again, which
 * its journal answers the same. Null for any other failure, and for a wait before anything committed.
 */
export function writePending(err: unknown, request: FastifyRequest): WritePending | null {
  if (!(err instanceof NotYetReadable)) return null;
  const position = request.written?.position;
  if (!position) return null;
  if (request.idempotent) request.idempotent.pending = position;
  return new WritePending(
    request.idempotent?.write
      ? `The write is recorded but not readable yet (the read models are behind). Do not change this request: retry it with the same Idempotency-Key in ${WRITE_PENDING_RETRY_S} s for its answer (409 idempotency_key_in_progress until it is readable).`
      : request.idempotent
        ? `The write is recorded but not readable yet (the read models are behind). Do not change this request: retry it with the same Idempotency-Key in ${WRITE_PENDING_RETRY_S} s for its answer.`
        : `The write is recorded but not readable yet (the read models are behind); do not send it again. Read the record in ${WRITE_PENDING_RETRY_S} s; send an Idempotency-Key with writes to be given their answer in such a case.`,
  );
}

/** `503 write_pending`, with its Retry-After (the error handler sets it from retryAfterSeconds). */
class WritePending extends DomainError {
  override readonly retryAfterSeconds = WRITE_PENDING_RETRY_S;

  constructor(message: string) {
    super('write_pending', message);
  }
}

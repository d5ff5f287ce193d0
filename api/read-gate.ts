import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Services } from '../runtime/services.js';

/** Seconds a client is told to wait before retrying a request the catch-up after start held too long. */
export const RETRY_AFTER_S = 5;

/**
 * Before anything reads (the API key first): a request waits until the read models have caught
 * up after a start, as long as `waitMs`, then answers 503 `not_ready` with Retry-After rather
 * than answer from read models that lack records it may have written before the restart. Once
 * caught up, a request settles to the log's head when another process may have written
 * (read-your-writes across processes, runtime/scale.ts). Writes wait alike: their key and their
 * checks read the read models. The probes are outside it (api/app.ts): they answer at once.
 * A callback hook, so that the common case (caught up, nothing to settle) makes no promise.
 */
export function readGate(services: Services, waitMs: number) {
  const settleReads = services.settleReads;
  const settle = (done: HookHandlerDoneFunction) => {
    const settling = settleReads?.();
    if (settling) settling.then(() => done(), done);
    else done();
  };
  return (_request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const catchingUp = services.readsCaughtUp?.();
    if (!catchingUp) return settle(done);
    within(catchingUp, waitMs).then((caughtUp) => (caughtUp ? settle(done) : notReady(services, reply)), done);
  };
}

async function within(promise: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function notReady(services: Services, reply: FastifyReply) {
  const followers = await services.followers().catch(() => []);
  const behind = followers.map((f) => f.behind).filter((b): b is number => typeof b === 'number');
  const left = behind.length ? ` (${Math.max(...behind).toLocaleString('en-US')} events to go)` : '';
  return reply
    .code(503)
    .header('Retry-After', String(RETRY_AFTER_S))
    .send({
      error: {
        code: 'not_ready',
        message: `The service has just started and is still catching up with its event log${left}; retry in ${RETRY_AFTER_S} seconds (GET /readyz says when it is ready).`,
      },
    });
}

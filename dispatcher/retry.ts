/** How deliveries are retried (decisions.md 2: TURNOUT_WEBHOOK_RETRY_BASE_MS, _RETRY_MAX_MS, _MAX_ATTEMPTS). */
export interface RetryPolicy {
  retryBaseMs: number;
  retryMaxMs: number;
  maxAttempts: number;
}

/**
 * Spec 6.6 and decisions.md 2: the first retry after about retryBaseMs, doubling up to
 * retryMaxMs, maxAttempts in all. Jitter of up to ±20% keeps endpoints that failed together
 * from being retried in lockstep.
 */
export function retryDelayMs(policy: Pick<RetryPolicy, 'retryBaseMs' | 'retryMaxMs'>, failedAttempt: number, random: () => number = Math.random): number {
  const exp = Math.min(policy.retryBaseMs * 2 ** Math.min(failedAttempt - 1, 40), policy.retryMaxMs);
  return Math.max(1, Math.round(exp * (0.8 + 0.4 * random())));
}

/** Whether another attempt follows `attempt` (1-based). */
export const hasNextAttempt = (policy: Pick<RetryPolicy, 'maxAttempts'>, attempt: number) => attempt < policy.maxAttempts;

/** How a failing step is retried: the first wait, doubling per failure up to the longest. */
export interface RetryPolicy {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { initialMs: 100, maxMs: 30_000 };

/**
 * The waits between the retries of one failing step (a projector's event, a resubscription, a
 * lost queue): doubling from `initialMs`, never past `maxMs`, each drawn within ±10% of its
 * nominal value so that processes failing together on one shared store do not retry in step.
 * `reset()` after a success starts the next failure from the first wait again.
 */
export class Backoff {
  private nominal: number;

  constructor(
    private readonly policy: RetryPolicy = DEFAULT_RETRY,
    private readonly random: () => number = Math.random,
  ) {
    this.nominal = policy.initialMs;
  }

  /** The wait before the next attempt; the one after it doubles. */
  next(): number {
    const nominal = this.nominal;
    this.nominal = Math.min(nominal * 2, this.policy.maxMs);
    return jittered(nominal, this.policy.maxMs, this.random);
  }

  reset(): void {
    this.nominal = this.policy.initialMs;
  }
}

/**
 * The wait after the `failures`-th failure in a row, for a retry whose failures are counted
 * elsewhere (a stored attempt count): the wait Backoff.next() would give at that point.
 */
export function backoffDelay(policy: RetryPolicy, failures: number, random: () => number = Math.random): number {
  const nominal = Math.min(policy.initialMs * 2 ** Math.min(Math.max(failures - 1, 0), 40), policy.maxMs);
  return jittered(nominal, policy.maxMs, random);
}

function jittered(nominal: number, maxMs: number, random: () => number): number {
  return Math.min(Math.round(nominal * (0.9 + 0.2 * random())), maxMs);
}

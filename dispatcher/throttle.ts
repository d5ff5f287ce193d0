/**
 * Per-endpoint throttle (decisions.md 12, `maxPerSecond`): an endpoint is never sent more than n
 * requests in any second, and nothing is dropped. Each endpoint keeps the times of its last n
 * sends; a send may go once the one n places back is a window old. The time is taken as the send
 * is let through, not planned ahead, so an attempt delayed by a busy event loop cannot bring two
 * sends closer together than the window. An attempt waits at most HOLD_MS for its turn; past that
 * the task goes back to the queue without counting an attempt, so a backlog does not hold the
 * workers, and the deferred tasks are spread at the endpoint's rate rather than returning at once.
 */
export type Admission = { go: true } | { go: false; deferMs: number };

export interface Throttle {
  admit(endpointId: number, perSecond: number): Promise<Admission>;
}

/** Longest an attempt holds a worker waiting for its turn. */
export const HOLD_MS = 1000;
/** One second and 1%: the network may bring two requests a little closer together. */
export const WINDOW_MS = 1010;

interface Timeline {
  /** The last n send times, ascending. */
  sent: number[];
  /** When the next deferred task should come back. */
  returnAt: number;
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: Clock = { now: Date.now, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };

/** The throttle of one worker process (the embedded product, or one dispatcher on NATS). */
export class MemoryThrottle implements Throttle {
  private readonly timelines = new Map<number, Timeline>();

  constructor(private readonly clock: Clock = realClock) {}

  async admit(endpointId: number, perSecond: number): Promise<Admission> {
    let t = this.timelines.get(endpointId);
    if (!t) this.timelines.set(endpointId, (t = { sent: [], returnAt: 0 }));
    const started = this.clock.now();
    for (;;) {
      const now = this.clock.now();
      const { sent } = t;
      const freeAt = sent.length >= perSecond ? sent[sent.length - perSecond] + WINDOW_MS : now;
      // Checked and recorded in one turn of the event loop: no other attempt can slip in between.
      if (freeAt <= now) {
        sent.push(now);
        if (sent.length > perSecond) sent.splice(0, sent.length - perSecond);
        return { go: true };
      }
      if (freeAt - started > HOLD_MS) {
        const back = Math.max(t.returnAt, freeAt);
        t.returnAt = back + WINDOW_MS / perSecond;
        return { go: false, deferMs: back - now };
      }
      await this.clock.sleep(freeAt - now);
    }
  }
}

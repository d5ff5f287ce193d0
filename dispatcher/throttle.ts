/**
 * Per-endpoint throttle (decisions.md 12, `maxPerSecond`): an endpoint is never sent more than n
 * requests in any second, and nothing is dropped. Sends are booked on a timeline where each slot
 * is at least a window after the one n places before it, so any window holds at most n. A slot
 * within HOLD_MS is kept and the attempt waits for it; a later one is not booked, and the task is
 * put back in the queue (without counting an attempt) so a backlog does not hold the workers.
 */
export type Booking = { waitMs: number } | { deferMs: number };

export interface Throttle {
  book(endpointId: number, perSecond: number, nowMs: number): Booking;
}

/** Longest an attempt holds a worker waiting for its slot. */
export const HOLD_MS = 1000;
/** One second and 1%: timers and the network may bring two requests a little closer together. */
const WINDOW_MS = 1010;

interface Timeline {
  /** The last n booked send times, ascending. */
  slots: number[];
  /** When the next deferred task should come back: deferrals are spread at the endpoint's rate. */
  returnAt: number;
}

/** The throttle of one worker process (the embedded product, or one dispatcher on NATS). */
export class MemoryThrottle implements Throttle {
  private readonly timelines = new Map<number, Timeline>();

  book(endpointId: number, perSecond: number, nowMs: number): Booking {
    let t = this.timelines.get(endpointId);
    if (!t) this.timelines.set(endpointId, (t = { slots: [], returnAt: 0 }));
    const { slots } = t;
    const last = slots.length ? slots[slots.length - 1] : -Infinity;
    const nBack = slots.length >= perSecond ? slots[slots.length - perSecond] + WINDOW_MS : -Infinity;
    const slot = Math.max(nowMs, last, nBack);
    if (slot - nowMs <= HOLD_MS) {
      slots.push(slot);
      if (slots.length > perSecond) slots.splice(0, slots.length - perSecond);
      return { waitMs: slot - nowMs };
    }
    // Booked beyond the hold: deferred tasks come back one per slot interval, not all at once.
    const back = Math.max(t.returnAt, slot);
    t.returnAt = back + WINDOW_MS / perSecond;
    return { deferMs: back - nowMs };
  }
}

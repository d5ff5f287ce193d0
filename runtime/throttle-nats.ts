import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { openBucket } from '../projections/nats-bucket.js';
import { type Admission, type Clock, HOLD_MS, type Throttle, WINDOW_MS } from '../dispatcher/throttle.js';
import { isConflict } from '../projections/lease-nats.js';
import { decodeLog, encodeLog } from './ratelimit-nats.js';

/**
 * The endpoint throttle shared by every dispatcher process on one NATS (decisions.md 12: the limit
 * is the endpoint's, whichever worker sends). The same rule as MemoryThrottle, on a log of the
 * endpoint's last n send times in a KV bucket: a send is let through only by a compare-and-swap on
 * the revision read, so two workers cannot both take the last place in a window. Deferred tasks
 * are spread per process. Entries expire once they can no longer hold anyone back.
 */
export class NatsThrottle implements Throttle {
  private readonly returnAt = new Map<number, number>();

  private constructor(
    private readonly kv: KV,
    private readonly clock: Clock,
  ) {}

  static async open(nc: NatsConnection, options: { bucket?: string; clock?: Clock } = {}): Promise<NatsThrottle> {
    // Dispatcher processes starting together each open it: openBucket takes the one another just made.
    const kv = await openBucket(new Kvm(nc), options.bucket ?? 'turnout_webhook_throttle', {
      history: 1,
      ttl: 10 * WINDOW_MS,
      description: 'Turnout webhook endpoints: the times of each throttled endpoint\'s last sends',
    });
    return new NatsThrottle(kv, options.clock ?? { now: Date.now, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
  }

  async admit(endpointId: number, perSecond: number): Promise<Admission> {
    const key = `endpoint_${endpointId}`;
    const started = this.clock.now();
    for (;;) {
      const entry = await this.kv.get(key);
      const live = entry !== null && entry.operation === 'PUT' && entry.length > 0;
      // Sorted: the workers' clocks may be a little apart.
      const sent = live ? decodeLog(safeJson(entry.string())).sort((a, b) => a - b) : [];
      const now = this.clock.now();
      const freeAt = sent.length >= perSecond ? sent[sent.length - perSecond] + WINDOW_MS : now;
      if (freeAt <= now) {
        const next = encodeLog([...sent, now].slice(-perSecond));
        try {
          if (live) await this.kv.update(key, next, entry.revision);
          else await this.kv.create(key, next);
          return { go: true };
        } catch (err) {
          if (!isConflict(err)) throw err;
          continue; // another worker sent meanwhile: read again
        }
      }
      if (freeAt - started > HOLD_MS) {
        const back = Math.max(this.returnAt.get(endpointId) ?? 0, freeAt);
        this.returnAt.set(endpointId, back + WINDOW_MS / perSecond);
        return { go: false, deferMs: back - now };
      }
      await this.clock.sleep(freeAt - now);
    }
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

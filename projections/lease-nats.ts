import { randomUUID } from 'node:crypto';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { type KV, Kvm } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Lease } from './lease.js';
import { openBucket } from './nats-bucket.js';

/**
 * A lease in a NATS KV bucket whose TTL is the lease's: the server drops an entry nobody renewed,
 * by its own clock, so process clocks never decide who holds it. Taking a free lease is `create`
 * (fails if an entry exists); renewing is `update` at the revision this holder last wrote (fails
 * if anyone else wrote since).
 */
export class NatsLease implements Lease {
  private revision = 0;
  readonly holder = randomUUID();

  private constructor(
    private readonly kv: KV,
    private readonly key: string,
    readonly ttlMs: number,
  ) {}

  static async open(nc: NatsConnection, name: string, ttlMs = 15_000, bucket = 'turnout_leases'): Promise<NatsLease> {
    const kv = await openBucket(new Kvm(nc), `${bucket}_${Math.round(ttlMs / 1000)}s`, { history: 1, ttl: ttlMs, description: 'Turnout leases' });
    return new NatsLease(kv, name, ttlMs);
  }

  async acquire(): Promise<boolean> {
    const value = JSON.stringify({ holder: this.holder, at: new Date().toISOString() });
    if (this.revision) {
      try {
        this.revision = await this.kv.update(this.key, value, this.revision);
        return true;
      } catch (err) {
        if (!isConflict(err)) throw err;
        // Ours lapsed: someone else took it, or nobody did (the server dropped it, say while it
        // was down) and it is free to take again at once rather than a renewal later.
        this.revision = 0;
      }
    }
    try {
      this.revision = await this.kv.create(this.key, value);
      return true;
    } catch (err) {
      if (!isConflict(err)) throw err;
      return false;
    }
  }

  async release(): Promise<void> {
    if (!this.revision) return;
    const rev = this.revision;
    this.revision = 0;
    await this.kv.delete(this.key, { previousSeq: rev }).catch((err) => {
      if (!isConflict(err)) throw err;
    });
  }
}

/** A KV write lost its compare-and-swap (or create found the key taken). */
export function isConflict(err: unknown): boolean {
  if (err instanceof JetStreamApiError)
    return err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown;
  return err instanceof Error && /wrong last sequence|key exists/i.test(err.message);
}

import type { KV, KvOptions } from '@nats-io/kv';
import { Backoff } from '../eventlog/backoff.js';

/** What opening a bucket needs of `Kvm`: its `create`, which opens the bucket, creating it where it is missing. */
export interface BucketMaker {
  create(name: string, opts?: Partial<KvOptions>): Promise<KV>;
}

/**
 * Opens a NATS KV bucket that processes of one installation share (the delivery queue's state,
 * the leases), creating it where it is missing. `Kvm.create` looks the bucket's stream up and
 * creates it when the server says it is not found; two processes starting at the same moment (a
 * rolling deploy, two workers) can both be told so, and the server refuses the later create ("subjects
 * overlap with an existing stream", "already in use"). Any failure is tried again, a little later,
 * where the next look-up finds what the other process made; the last one fails the start with the
 * server's reason.
 */
export async function openBucket(kvm: BucketMaker, name: string, opts: Partial<KvOptions>, attempts = 5, retryMs = 50): Promise<KV> {
  const backoff = new Backoff({ initialMs: retryMs, maxMs: 2_000 });
  for (let attempt = 1; ; attempt++) {
    try {
      return await kvm.create(name, opts);
    } catch (err) {
      if (attempt >= attempts) throw new Error(`NATS bucket ${name}: could not open it (${err instanceof Error ? err.message : String(err)})`, { cause: err });
      await new Promise((r) => setTimeout(r, backoff.next()));
    }
  }
}

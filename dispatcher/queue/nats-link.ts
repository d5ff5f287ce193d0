import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Whether a NATS connection is up, and a call on every reconnect. nats.js's own consumers heal
 * after a reconnect by asking the server for the consumer's info, and a failure of that (a server
 * just restarted, its JetStream not ready yet) waits out a backoff of up to 30 s before the next
 * pull (deliveries stalled after an outage): our consumers start afresh instead.
 */
export class NatsLink {
  private connected = true;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly nc: NatsConnection) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.connected = false;
        else if (s.type === 'reconnect') {
          this.connected = true;
          for (const l of [...this.listeners]) l();
        }
      }
    })().catch(() => undefined);
  }

  /** False from a disconnect until the reconnect, and once closed. */
  get up(): boolean {
    return this.connected && !this.nc.isClosed();
  }

  /** Calls `fn` after each reconnect; returns the call that stops it. */
  onReconnect(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

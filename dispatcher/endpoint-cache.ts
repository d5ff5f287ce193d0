import { type EndpointState, endpointEvolver, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import { lastEvent, load } from '../eventlog/load.js';
import type { EventLog } from '../eventlog/port.js';

/** Enough for every endpoint a worker is likely to serve; beyond it the oldest entry goes. */
const MAX_ENDPOINTS = 10_000;

/**
 * The endpoints a worker sends to, kept between attempts. Every attempt still asks the log for
 * the endpoint stream's revision (one index read on the embedded log, instead of reading and
 * folding the stream) and reloads when it moved, so a rotated secret, a new URL, a deactivation or
 * a new maxPerSecond applies to the very next attempt, as when each attempt loaded the endpoint.
 */
export class EndpointCache {
  private readonly known = new Map<number, { revision: bigint; state: EndpointState }>();

  constructor(private readonly log: EventLog) {}

  async current(id: number): Promise<EndpointState> {
    const stream = webhookEndpointStream(id);
    const revision = this.log.streamRevision ? await this.log.streamRevision(stream) : ((await lastEvent(this.log, stream))?.revision ?? null);
    const hit = this.known.get(id);
    if (hit && hit.revision === revision) return hit.state;
    // The state and the revision it is as of come from the same read.
    const loaded = await load(this.log, stream, endpointEvolver);
    if (loaded.revision === null) this.known.delete(id);
    else {
      if (!hit && this.known.size >= MAX_ENDPOINTS) this.known.delete(this.known.keys().next().value!);
      this.known.set(id, { revision: loaded.revision, state: loaded.state });
    }
    return loaded.state;
  }
}

import type { Evolver, RecordedEvent } from '../domain/shared/events.js';
import { type EndpointState, endpointEvolver, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import { lastEvent } from '../eventlog/load.js';
import type { EventLog } from '../eventlog/port.js';

/** Enough for every endpoint a worker is likely to serve; beyond it the oldest entry goes. */
const MAX_ENDPOINTS = 10_000;

/**
 * An endpoint as the worker sends to it: its state, and `activeFrom`, the log position (prepare)
 * of the event that last made it active (created active, or enabled again after a PATCH or an
 * auto-disable); null while it never was.
 */
export type WorkerEndpoint = EndpointState & { activeFrom: bigint | null };

/** Folds the endpoint's events, noting where each change from inactive to active was written. */
function fold(events: RecordedEvent[]): WorkerEndpoint {
  // The stream holds only the endpoint's events (as load() folds it).
  const evolver: Evolver<EndpointState> = endpointEvolver;
  let state = evolver.initial();
  let activeFrom: bigint | null = null;
  for (const e of events) {
    const next = evolver.evolve(state, e);
    if (next.active && !state.active) activeFrom = e.position.prepare;
    state = next;
  }
  return { ...state, activeFrom };
}

/**
 * The endpoints a worker sends to, kept between attempts. Every attempt still asks the log for
 * the endpoint stream's revision (one index read on the embedded log, instead of reading and
 * folding the stream) and reloads when it moved, so a rotated secret, a new URL, a deactivation or
 * a new maxPerSecond applies to the very next attempt, as when each attempt loaded the endpoint.
 */
export class EndpointCache {
  private readonly known = new Map<number, { revision: bigint; state: WorkerEndpoint }>();

  constructor(private readonly log: EventLog) {}

  async current(id: number): Promise<WorkerEndpoint> {
    const stream = webhookEndpointStream(id);
    const revision = this.log.streamRevision ? await this.log.streamRevision(stream) : ((await lastEvent(this.log, stream))?.revision ?? null);
    const hit = this.known.get(id);
    if (hit && hit.revision === revision) return hit.state;
    // The state and the revision it is as of come from the same read.
    const events = await this.log.readStream(stream);
    const state = fold(events);
    const last = events.at(-1);
    if (!last) this.known.delete(id);
    else {
      if (!hit && this.known.size >= MAX_ENDPOINTS) this.known.delete(this.known.keys().next().value!);
      this.known.set(id, { revision: last.revision, state });
    }
    return state;
  }
}

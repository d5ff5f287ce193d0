import type { Evolver, RecordedEvent } from '../domain/shared/events.js';
import type { EventLog } from './port.js';

export interface Loaded<S> {
  state: S;
  /** Revision of the last event, or null when the stream does not exist. */
  revision: bigint | null;
  events: RecordedEvent[];
}

/** Reads a stream and folds it through the aggregate's evolver. */
export async function load<S>(log: EventLog, stream: string, evolver: Evolver<S>): Promise<Loaded<S>> {
  const events = await log.readStream(stream);
  let state = evolver.initial();
  for (const e of events) state = evolver.evolve(state, e);
  return { state, revision: events.length ? events[events.length - 1].revision : null, events };
}

import type { RecordedEvent } from './events.js';

/**
 * A record's revision (decisions.md §7): the writes applied to it, from 1 at its creation. One
 * write is one append, however many events it stores (a task assignment's VolunteerTaskUpdated
 * and person-event, an event's creation with its templates and form defaults), so stream
 * revisions (one per event) are not it. The webhook `version`, the histories, `ETag` and
 * `?revision=` all read it from here.
 *
 * commands/aggregate.ts handle() stamps every event of an append with the revision that append
 * makes (`metadata.revision`), so the revision after any event is read off the event itself, on
 * every log adapter, without reading the stream. Events written before the stamp existed count
 * one revision per run of unstamped events sharing their metadata (one append's events carry one
 * metadata object: the same correlationId and `at`).
 */
export function revisionsOf(events: readonly RecordedEvent[]): number[] {
  const out: number[] = [];
  let revision = 0;
  for (let i = 0; i < events.length; i++) {
    const m = events[i].metadata;
    if (typeof m.revision === 'number') revision = m.revision;
    else {
      const p = events[i - 1]?.metadata;
      if (!p || typeof p.revision === 'number' || p.correlationId !== m.correlationId || p.at !== m.at) revision++;
    }
    out.push(revision);
  }
  return out;
}

/**
 * What a read model keeps to follow a record's revision one event at a time, as revisionsOf
 * counts it: the revision, and for an unstamped event the key of its write (correlation id and
 * time), which tells whether the next unstamped event belongs to the same write.
 */
export interface RevisionMark {
  revision: number;
  write: string | null;
}

/** The mark after `event`, given the mark after the stream's event before it (null: none). */
export function markAfter(event: RecordedEvent, before: RevisionMark | null): RevisionMark {
  const m = event.metadata;
  if (typeof m.revision === 'number') return { revision: m.revision, write: null };
  const write = `${m.correlationId} ${m.at}`;
  const revision = before?.revision ?? 0;
  return { revision: before && before.write === write ? revision : revision + 1, write };
}

/** Whether two events of one stream were stored by one write (one append): its stamp, else its shared metadata. */
export function sameWrite(a: RecordedEvent, b: RecordedEvent): boolean {
  const [m, n] = [a.metadata, b.metadata];
  if (typeof m.revision === 'number' || typeof n.revision === 'number') return m.revision === n.revision;
  return m.correlationId === n.correlationId && m.at === n.at;
}

/** The record's revision after the last of its events (0: no record yet). */
export function currentRevision(events: readonly RecordedEvent[]): number {
  const last = events.at(-1);
  if (!last) return 0;
  return typeof last.metadata.revision === 'number' ? last.metadata.revision : revisionsOf(events)[events.length - 1];
}

/**
 * The revision after `event`, given its stream up to it (at least; later events are ignored):
 * read off the stamp when it has one, else counted.
 */
export function revisionAfter(event: RecordedEvent, stream: readonly RecordedEvent[]): number {
  if (typeof event.metadata.revision === 'number') return event.metadata.revision;
  const upTo = stream.filter((e) => e.revision <= event.revision);
  return currentRevision(upTo);
}


/** A stream's events grouped by write, oldest first: group i is revision i + 1 (the histories). */
export function writesOf<E extends RecordedEvent>(events: readonly E[]): E[][] {
  const revisions = revisionsOf(events);
  const writes: E[][] = [];
  for (let i = 0; i < events.length; i++) {
    if (i === 0 || revisions[i] !== revisions[i - 1]) writes.push([events[i]]);
    else writes[writes.length - 1].push(events[i]);
  }
  return writes;
}

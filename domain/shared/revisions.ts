import type { RecordedEvent } from './events.js';

/**
 * decisions.md §7: a record's revisions count the writes applied to it, from 1 at its creation;
 * one write (one append, however many events it stores) is one revision. The log numbers events,
 * not writes, so a write is told by its metadata: every event of one append carries the same
 * metadata (commands/aggregate.ts handle), and two writes never share both correlation id (the
 * request) and instant.
 */
export const sameWrite = (a: RecordedEvent, b: RecordedEvent): boolean =>
  a.metadata.correlationId === b.metadata.correlationId && a.metadata.at === b.metadata.at;

/** A stream's events grouped by write, oldest first: group i is revision i + 1. */
export function writesOf<E extends RecordedEvent>(events: readonly E[]): E[][] {
  const writes: E[][] = [];
  for (let i = 0; i < events.length; i++) {
    if (i === 0 || !sameWrite(events[i - 1], events[i])) writes.push([events[i]]);
    else writes[writes.length - 1].push(events[i]);
  }
  return writes;
}

/**
 * The record's revision right after the write holding the event of stream revision `revision`
 * (from 0): the webhook `version`, the ETag, `?revision=`. `events` are the stream's, oldest
 * first, through at least that event. 0 when the stream holds no such event.
 */
export function revisionOf(events: readonly RecordedEvent[], revision: bigint): number {
  let count = 0;
  for (let i = 0; i < events.length && events[i].revision <= revision; i++) if (i === 0 || !sameWrite(events[i - 1], events[i])) count++;
  return count;
}

import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { currentRevision, markAfter, type RevisionMark, revisionAfter, revisionsOf } from '../../domain/shared/revision.js';

const event = (revision: number, correlationId: string, at: string, stamped?: number): RecordedEvent => ({
  type: 'T',
  data: {},
  stream: 's-1',
  revision: BigInt(revision),
  position: { commit: BigInt(revision), prepare: BigInt(revision) },
  metadata: { team: 1, source: 'Application', keyName: null, correlationId, at, ...(stamped === undefined ? {} : { revision: stamped }) },
});

describe('a record revision (decisions.md §7: one write, one revision, from 1)', () => {
  it('reads the stamp each append carries', () => {
    const events = [event(0, 'a', 't1', 1), event(1, 'b', 't2', 2), event(2, 'b', 't2', 2)];
    expect(revisionsOf(events)).toEqual([1, 2, 2]);
    expect(currentRevision(events)).toBe(2);
    expect(revisionAfter(events[1], events)).toBe(2);
  });

  it('counts unstamped events (written before the stamp) one revision per shared metadata, then follows the stamps', () => {
    const events = [event(0, 'a', 't1'), event(1, 'b', 't2'), event(2, 'b', 't2'), event(3, 'b', 't3'), event(4, 'c', 't4', 4), event(5, 'd', 't5', 5)];
    expect(revisionsOf(events)).toEqual([1, 2, 2, 3, 4, 5]);
    expect(currentRevision(events.slice(0, 3))).toBe(2);
    expect(revisionAfter(events[2], events)).toBe(2);
  });

  it('is 0 before the record exists', () => {
    expect(currentRevision([])).toBe(0);
  });
});

describe('following a record revision one event at a time (what a read model keeps beside its row)', () => {
  const follow = (events: RecordedEvent[]) => {
    const out: number[] = [];
    let mark: RevisionMark | null = null;
    for (const e of events) out.push((mark = markAfter(e, mark)).revision);
    return out;
  };

  it('counts as revisionsOf does over stamped, unstamped and mixed streams', () => {
    const streams = [
      [event(0, 'a', 't1', 1), event(1, 'b', 't2', 2), event(2, 'b', 't2', 2)],
      [event(0, 'a', 't1'), event(1, 'b', 't2'), event(2, 'b', 't2'), event(3, 'b', 't3'), event(4, 'c', 't4', 4), event(5, 'd', 't5', 5)],
      // One correlation id and time on both sides of a stamped event: still two writes.
      [event(0, 'a', 't1'), event(1, 'a', 't1'), event(2, 'x', 't2', 2), event(3, 'x', 't2')],
    ];
    for (const events of streams) expect(follow(events)).toEqual(revisionsOf(events));
  });

  it('keeps the write key only while the last event is unstamped', () => {
    expect(markAfter(event(0, 'a', 't1'), null)).toEqual({ revision: 1, write: 'a t1' });
    expect(markAfter(event(1, 'b', 't2', 2), { revision: 1, write: 'a t1' })).toEqual({ revision: 2, write: null });
  });
});

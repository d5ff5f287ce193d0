import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { currentRevision, revisionsOf, writesOf } from '../../domain/shared/revision.js';

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
let n = 0;
const ev = (correlationId: string, second: number): RecordedEvent => {
  const revision = BigInt(n++);
  return { type: 'X', data: {}, stream: 's-1', revision, position: { commit: revision + 1n, prepare: revision + 1n }, metadata: { team: 1, source: 'Application', keyName: null, correlationId, at: at(second) } };
};

describe('revisions of unstamped events count writes, from 1 (decisions.md §7)', () => {
  it('counts the events of one append as one write, and another request or instant as another', () => {
    n = 0;
    const events = [ev('a', 1), ev('a', 1), ev('b', 2), ev('b', 3), ev('c', 3), ev('c', 3)];
    expect(writesOf(events).map((w) => w.length)).toEqual([2, 1, 1, 2]);
    expect(revisionsOf(events)).toEqual([1, 1, 2, 3, 4, 4]);
    expect(currentRevision([])).toBe(0);
  });
});

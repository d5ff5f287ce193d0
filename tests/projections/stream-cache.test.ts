import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventLog } from '../../eventlog/port.js';
import { readRecordStream } from '../../projections/history/stream-cache.js';

/**
 * Another process erases a person (decisions.md §17): it appends ConstituentErased, then rewrites
 * the stream's events in place (the embedded log), or destroys the key they are sealed under
 * (EventStoreDB). This process's history cache must not go on serving the copy it held.
 */
const values = (events: RecordedEvent[]) => JSON.stringify(events.map((e) => e.data));
const meta = { team: 1, source: 'Public API' as const, keyName: 'k', correlationId: 'c', at: '2026-11-28T10:00:00.000Z' };
function sharedLog() {
  const events: RecordedEvent[] = [];
  const event = (type: string, data: Record<string, unknown>): RecordedEvent => ({
    stream: 'constituent-1',
    revision: BigInt(events.length),
    position: { commit: BigInt(events.length + 1), prepare: BigInt(events.length + 1) },
    type,
    data,
    metadata: meta,
  });
  const log = {
    readStream: async () => events.map((e) => ({ ...e })),
    readStreamBackwards: async (_s: string, n: number) => events.slice(-n).reverse().map((e) => ({ ...e })),
  } as unknown as EventLog;
  return {
    log,
    append: (type: string, data: Record<string, unknown>) => void events.push(event(type, data)),
    rewrite: () => events.forEach((e, i) => (events[i] = { ...e, data: { id: 1, erased: true } })),
  };
}

describe("a record's held stream, once another process erases it", () => {
  it('is read again from the log, not served from the copy with the values', async () => {
    const shared = sharedLog();
    shared.append('ConstituentCreated', { id: 1, fields: { FirstName: 'MkHeld' } });
    expect(values(await readRecordStream(shared.log, 'constituent-1'))).toContain('MkHeld');
    shared.rewrite();
    shared.append('ConstituentErased', { id: 1 });
    expect(values(await readRecordStream(shared.log, 'constituent-1'))).not.toContain('MkHeld');
  });

  it('is not held once erased: the rewrite in place comes after the erasure is recorded, with no revision of its own', async () => {
    const shared = sharedLog();
    shared.append('ConstituentCreated', { id: 1, fields: { FirstName: 'MkLate' } });
    shared.append('ConstituentErased', { id: 1 });
    // Read between the erasure's record and its rewrite of the log.
    expect(values(await readRecordStream(shared.log, 'constituent-1'))).toContain('MkLate');
    shared.rewrite();
    expect(values(await readRecordStream(shared.log, 'constituent-1'))).not.toContain('MkLate');
  });
});

import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { envelopeId, isPingEnvelopeId, pingEnvelopeId, seqOfEnvelopeId } from '../../dispatcher/envelope.js';

const at = (prepare: bigint): RecordedEvent => ({
  type: 'VolunteerTaskAssigned',
  data: {},
  stream: 'volunteer_task-1',
  revision: 1n,
  position: { commit: 7n, prepare },
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2030-01-02T03:04:05.678Z', revision: 2 },
});

describe('envelope ids (decisions.md §7)', () => {
  it('are the prepare position times 10 plus the type index, then the unix seconds', () => {
    const secs = Date.parse('2030-01-02T03:04:05Z') / 1000;
    expect(envelopeId(at(42n))).toBe(`evt_420_${secs}`);
    expect(envelopeId(at(42n), 1)).toBe(`evt_421_${secs}`);
  });

  it('never repeat across neighbouring positions and type indexes', () => {
    const ids = new Set<string>();
    for (let p = 0n; p < 50n; p++) for (let i = 0; i < 10; i++) ids.add(envelopeId(at(p), i));
    expect(ids.size).toBe(500);
  });

  it('keep their exact digits past 2^53 (EventStoreDB prepare positions are 64-bit)', () => {
    expect(envelopeId(at(9_007_199_254_740_993n), 1).split('_')[1]).toBe('90071992547409931');
  });
});

describe("a test ping's envelope id (decisions.md §12)", () => {
  const secs = 1_900_000_000;
  it('has the form evt_<number>_<unix seconds>, and is new for each ping', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => pingEnvelopeId(secs)));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(new RegExp(`^evt_\\d+_${secs}$`));
  });

  it('is never a log event\'s: above what a 64-bit position times 10 plus a type index reaches', () => {
    const highest = envelopeId(at(2n ** 64n - 1n), 9);
    expect(isPingEnvelopeId(highest)).toBe(false);
    expect(BigInt(pingEnvelopeId(secs).split('_')[1])).toBeGreaterThan(BigInt(highest.split('_')[1]));
    for (const id of [envelopeId(at(0n)), envelopeId(at(42n), 1), highest]) expect(isPingEnvelopeId(id)).toBe(false);
    expect(isPingEnvelopeId(pingEnvelopeId(secs))).toBe(true);
  });

  it('is not taken for a log event by what reads envelope numbers (an erasure\'s rebuilds, a retry\'s body)', () => {
    expect(seqOfEnvelopeId(pingEnvelopeId(secs))).toBeNull();
    expect(seqOfEnvelopeId(envelopeId(at(42n), 1))).toBe(421n);
  });
});

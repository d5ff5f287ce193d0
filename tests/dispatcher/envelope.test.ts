import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { envelopeId } from '../../dispatcher/envelope.js';

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

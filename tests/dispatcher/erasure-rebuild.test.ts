import { describe, expect, it } from 'vitest';
import { envelopeRebuilder } from '../../dispatcher/erasure.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventLog } from '../../eventlog/port.js';

/**
 * decisions.md §17: an erasure builds again each stored envelope that holds the person's values,
 * from the team's event at the envelope's position. On EventStoreDB the team read goes through
 * links written a moment after the append: an envelope of an event not linked yet must not be
 * taken to fire no longer (which removes it from the feed).
 */
const created: RecordedEvent = {
  stream: 'volunteer-7',
  revision: 0n,
  position: { commit: 42n, prepare: 42n },
  type: 'VolunteerCreated',
  data: { id: 7, fields: { FkConstituent: 3, FirstName: null, LastName: null } },
  metadata: { team: 1, source: 'Public API', keyName: 'k', correlationId: 'c', at: '2026-11-28T02:00:00.000Z', revision: 1 },
};

function trailingLog(linkedAfterReads: number) {
  let reads = 0;
  const log = {
    // The team's links reach the event only after this many reads.
    readTeam: async () => (++reads > linkedAfterReads ? [created] : []),
    readStream: async () => [created],
    readStreamUntil: async () => [created],
  } as unknown as Pick<EventLog, 'readTeam' | 'readStream' | 'readStreamUntil'>;
  return { log, reads: () => reads };
}

describe("an erasure's rebuild of an envelope from the team's event", () => {
  it('waits for a team read that trails the append, and builds the envelope, not a removal', async () => {
    const { log, reads } = trailingLog(2);
    const json = await envelopeRebuilder(log, 1, 5_000)(420n);
    expect(json && JSON.parse(json)).toMatchObject({ type: 'volunteer.created', team: 1 });
    expect(reads()).toBe(3);
  });

  it('fails, removing nothing, when the read does not reach the event within the wait (the erasure runs the step again)', async () => {
    const { log } = trailingLog(Infinity);
    await expect(envelopeRebuilder(log, 1, 100)(420n)).rejects.toThrow(/not readable up to log position 42/);
  });
});

import { describe, expect, it } from 'vitest';
import { envelopeRebuilder } from '../../dispatcher/erasure.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { EventLog } from '../../eventlog/port.js';
import { standingAlone } from '../../domain/shared/text.js';
import { withoutRecipient } from '../../commands/notifications/sender.js';

const meta = { team: 1, source: 'Public API', keyName: 'k', correlationId: 'c', at: '2026-11-28T02:00:00.000Z', revision: 1 } as const;
// The envelope's event: prepared at 42, committed at 100 (EventStoreDB), after 25 other events of the team.
const target: RecordedEvent = {
  stream: 'volunteer-7', revision: 0n, position: { commit: 100n, prepare: 42n }, type: 'VolunteerCreated',
  data: { id: 7, fields: { FkConstituent: 3, FirstName: null, LastName: null } }, metadata: meta,
} as unknown as RecordedEvent;
const between: RecordedEvent[] = Array.from({ length: 25 }, (_, i) => ({
  ...target, stream: `volunteer-${100 + i}`, position: { commit: 50n + BigInt(i), prepare: 50n + BigInt(i) },
  data: { id: 100 + i, fields: { FkConstituent: 9, FirstName: null, LastName: null } },
})) as RecordedEvent[];
const all = [...between, target];

describe('what an erasure finds, and the event it builds an envelope again from (review of e4e1863)', () => {
  it('envelopeRebuilder: an event with more than 20 team events committed between its prepare and commit is not taken to fire no longer', async () => {
    const log = {
      readTeam: async (_t: number, from: { commit: bigint }, limit: number) => all.filter((e) => e.position.commit >= from.commit).slice(0, limit),
      readStream: async () => [target],
      readStreamUntil: async () => [target],
    } as unknown as Pick<EventLog, 'readTeam' | 'readStream' | 'readStreamUntil'>;
    // null = "fires no longer": the queued task is dropped (purge / worker), the feed's envelope removed.
    expect(await envelopeRebuilder(log, 1, 200)(420n)).not.toBeNull();
  });

  it('standingAlone: a phone number written with a country code and a hyphen is still found (found before e4e1863)', () => {
    expect('Call me on 1-555-0100'.replace(standingAlone('555-0100'), '[erased]')).toBe('Call me on 1-[erased]');
  });

  it('standingAlone: a last name after a hyphenated first part (found before e4e1863)', () => {
    expect('Ms Smith-Roe called'.replace(standingAlone('Roe'), '[erased]')).toBe('Ms Smith-[erased] called');
  });

  it('withoutRecipient: a two-letter local part does not rewrite words of the refusal', () => {
    expect(withoutRecipient('550 5.1.1 <in@example.org>: User unknown in virtual alias table', 'in@example.org')).toBe('550 5.1.1 <the recipient>: User unknown in virtual alias table');
  });
});

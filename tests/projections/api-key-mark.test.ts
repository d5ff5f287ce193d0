import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { ApiKeyMark } from '../../projections/api-key-mark.js';
import { SqliteProjection } from '../../projections/engine/sqlite-step.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { teamsProjection } from '../../projections/teams.js';

/** The log as a list: the step reads what is after its checkpoint. */
function listLog() {
  const events: RecordedEvent[] = [];
  return {
    events,
    readAfter: (after: bigint, max: number) => events.filter((e) => e.position.commit > after).slice(0, max),
    head: () => (events.length ? events[events.length - 1].position.commit : 0n),
    add(type: string, data: object) {
      const commit = BigInt(events.length + 1);
      events.push({ type, data, stream: 'team-1', revision: commit - 1n, position: { commit, prepare: commit }, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2026-01-01T00:00:00.000Z' } } as RecordedEvent);
    },
  };
}

describe('the API-key mark', () => {
  it('is bumped by a step that applied an API-key event, once committed, and by no other step', async () => {
    const core = new SqliteReadCore(':memory:');
    const log = listLog();
    const mark = new ApiKeyMark();
    const projection = new SqliteProjection(core, [teamsProjection], log, { keyMark: mark });
    projection.prepare();
    log.add('TeamCreated', { id: 1, name: 'T' });
    await projection.step();
    expect(mark.read()).toBe(0);
    log.add('ApiKeyIssued', { keyId: 7, name: 'K', scope: 'read_write', prefix: 'tko_000000000000', hash: '00' });
    // Seen from the mark's reader: by the time it moves, the key's row is committed.
    let seenAtBump: unknown = 'not bumped';
    const bump = mark.bump.bind(mark);
    mark.bump = () => {
      seenAtBump = core.db.inTransaction;
      bump();
    };
    await projection.step();
    expect(mark.read()).toBe(1);
    expect(seenAtBump).toBe(false);
    log.add('TeamUpdated', { id: 1, changes: { name: 'U' } });
    await projection.step();
    expect(mark.read()).toBe(1);
    log.add('ApiKeyRevoked', { keyId: 7 });
    await projection.step();
    expect(mark.read()).toBe(2);
    core.close();
  });

  it('is one counter across threads: a copy made from its buffer reads what the other bumped', () => {
    const mark = new ApiKeyMark();
    const other = new ApiKeyMark(structuredClone(mark.buffer));
    other.bump();
    expect(mark.read()).toBe(1);
  });
});

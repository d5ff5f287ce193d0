import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Projector } from '../../projections/engine/projector.js';
import { SqliteProjection } from '../../projections/engine/sqlite-step.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { tempDirs } from '../support/temp-dirs.js';

/** The log as a list: the step reads what is after its checkpoint. */
function listLog() {
  const events: RecordedEvent[] = [];
  return {
    readAfter: (after: bigint, max: number) => events.filter((e) => e.position.commit > after).slice(0, max),
    head: () => (events.length ? events[events.length - 1].position.commit : 0n),
    add(n: number) {
      for (let i = 0; i < n; i++) {
        const commit = BigInt(events.length + 1);
        events.push({ type: 'Counted', data: {}, stream: 'counted-1', revision: commit - 1n, position: { commit, prepare: commit }, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2026-01-01T00:00:00.000Z' } } as unknown as RecordedEvent);
      }
    },
  };
}

/** Counts every event it applies, on whichever connection applies it. */
function counting(applied: bigint[]): Projector {
  return {
    name: 'counting',
    version: 1,
    categories: ['counted' as never],
    collections: [{ name: 'counted', idField: 'id' }],
    async apply(event, store) {
      applied.push(event.position.commit);
      await store.put('counted', { id: Number(event.position.commit) });
    },
  };
}

const tempDir = tempDirs('turnout-step-');

describe('the live step over SQLite, reading its checkpoints again only when another connection has committed', () => {
  it('applies each event once when two connections (two processes with NATS) take turns on one file', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'read.sqlite');
    const log = listLog();
    const applied: bigint[] = [];
    const a = new SqliteReadCore(file);
    const b = new SqliteReadCore(file);
    const one = new SqliteProjection(a, [counting(applied)], log);
    const other = new SqliteProjection(b, [counting(applied)], log);
    one.prepare();
    other.prepare();
    for (let round = 0; round < 4; round++) {
      log.add(3);
      // Each takes two steps in a row (the second sees nothing new of the other's), then the other goes.
      await one.step(2);
      await one.step(2);
      log.add(2);
      await other.step(3);
      await other.step(3);
    }
    expect(applied).toEqual(Array.from({ length: 20 }, (_, i) => BigInt(i + 1)));
    expect(a.getCheckpoint('projector:counting')?.commit).toBe(20n);
    a.close();
    b.close();
  });

  it('takes a read model out of the bulk mode another connection left it in, though it saw that write while still behind', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'read.sqlite');
    const log = listLog();
    const a = new SqliteReadCore(file);
    const one = new SqliteProjection(a, [counting([])], log);
    one.prepare();
    log.add(5);
    expect((await one.step()).caughtUp).toBe(true);
    // A process catching up on the same file enters bulk mode, then dies before it leaves it.
    const b = new SqliteReadCore(file);
    new SqliteProjection(b, [counting([])], log).prepare();
    b.beginBulk(['counted']);
    b.close();
    log.add(4);
    expect((await one.step(2)).caughtUp).toBe(false);
    expect((await one.step(2)).caughtUp).toBe(true);
    // In bulk mode a read model notes no changed row for its search tables, so searches would miss them.
    expect(a.inBulk('counted')).toBe(false);
    a.close();
  });
});

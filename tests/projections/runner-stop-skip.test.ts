import { describe, expect, it } from 'vitest';
import { ANY } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import type { Projector } from '../../projections/engine/projector.js';
import type { ReadStore } from '../../projections/store/port.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { event, sleep, withoutCheckpoints } from '../support/runner-fixtures.js';

describe('a runner stopped while an event keeps failing (the review of 808224c)', () => {
  it('applies nothing after the failing event and stores no checkpoint past it', async () => {
    const base = new SqliteEventLog(':memory:');
    const log = withoutCheckpoints(base);
    const store = new MemoryReadStore();
    const seen: string[] = [];
    const p: Projector = {
      name: 'p',
      version: 1,
      collections: [{ name: 'p_v1', idField: 'id' }],
      async apply(e: { type: string }, s: ReadStore) {
        if (e.type === 'Bad') throw new Error('always fails');
        seen.push(e.type);
        await s.put('p_v1', { id: e.type, x: 1 });
      },
    } as unknown as Projector;
    const runner = new ProjectionRunner(log, store, [p], { retryInitialMs: 20, retryMaxMs: 40, waitTimeoutMs: 500 });
    await runner.start();
    const bad = await log.append('a-1', [event('Bad')], ANY);
    await sleep(60); // [Bad] retrying
    await log.append('b-1', [event('Good')], ANY); // handle(Good) waits on the failing chunk
    await sleep(60);
    await runner.stop();
    const cp = await store.getCheckpoint('projector:p@v1');
    await log.close();
    expect({ seen, checkpointPastBad: cp !== null && cp.commit >= bad.position.commit }).toEqual({ seen: [], checkpointPastBad: false });
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEED_MODEL, type FeedDoc, FeedModel, feedModelProjector } from '../../dispatcher/feed-model.js';
import type { StreamReader } from '../../dispatcher/history.js';
import { ProjectionRunner } from '../../projections/engine/main-thread.js';
import { eq } from '../../projections/store/port.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * decisions.md §17 on the in-memory SQLite read store (one connection): the change feed's
 * projector may wait on the log's I/O inside its chunk's open transaction; an erasure's rewrite
 * made meanwhile must not land in that transaction, or the chunk failing rolls it back and the
 * erased envelope returns after the erasure answered.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe("an erasure's rewrite of the in-memory SQLite change feed", () => {
  it("survives the projector's open chunk failing after it", async () => {
    const team = await t.team();
    const api = team.api.Integration;
    const log = t.runtime.services.log;
    let gate: Promise<void> | null = null;
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const reader: StreamReader = {
      readStream: (s) => log.readStream(s),
      readStreamUntil: async (s, p) => {
        if (gate) {
          entered();
          await gate;
          throw new Error('log read failed (network)');
        }
        return log.readStreamUntil!(s, p);
      },
    };
    const store = new SqliteReadStore(':memory:');
    const errors: unknown[] = [];
    const runner = new ProjectionRunner(log, store, [feedModelProjector(reader)], { onError: (e) => errors.push(e), report: () => undefined, retryInitialMs: 1, retryMaxMs: 5 });
    await runner.start();
    try {
      const id = (await api.post('/constituents', { FirstName: 'Mkrollfirst', LastName: 'Mkrolllast' })).body.constituent.PkConstituent as number;
      await runner.waitFor((await log.head())!);
      const docs = () => store.scan<FeedDoc>(FEED_MODEL.name, eq('team', team.id), 'seq', 100);
      const seq = (await docs()).find((d) => d.type === 'constituent.created' && d.json.includes(`"PkConstituent":${id}`))!.seq;
      const created = async () => (await docs()).find((d) => d.seq === seq)?.json;
      expect(await created()).toContain('Mkrolllast');
      // The next chunk's log read hangs (network I/O inside the open transaction), then fails.
      let open!: () => void;
      gate = new Promise<void>((r) => (open = r));
      await api.patch(`/constituents/${id}`, { Nickname: 'Other' });
      await inside;
      // Meanwhile the erasure's feed step rewrites the person's created envelope.
      const model = new FeedModel(store, async () => undefined);
      const rewriting = model.rewrite(team.id, (_seq, json) => json.includes('Mkrolllast') && json.includes('"constituent.created"'), async () => JSON.stringify({ erased: true }));
      // Every await of the rewrite is a microtask (the store is synchronous): one turn of the event loop lets it write, or wait its turn.
      await new Promise((r) => setImmediate(r));
      open();
      gate = null;
      expect(await rewriting).toBe(1);
      await runner.waitFor((await log.head())!);
      expect(errors.map(String)).toContain('Error: log read failed (network)');
      expect(await created()).toBe(JSON.stringify({ erased: true }));
    } finally {
      await runner.stop().catch(() => undefined);
    }
  });
});

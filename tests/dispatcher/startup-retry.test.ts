import { Sealer } from '../../eventlog/sealing.js';
import { describe, expect, it } from 'vitest';
import { StoreDeliveryLog } from '../../dispatcher/deliveries.js';
import { StoreReplayStore } from '../../dispatcher/replays.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';

/** A read store whose defineCollection fails `times` times (a transient MongoDB error at start). */
function flakyStore(times: number) {
  const store = new MemoryReadStore();
  const define = store.defineCollection.bind(store);
  let failures = times;
  let calls = 0;
  store.defineCollection = async (def) => {
    calls++;
    if (failures-- > 0) throw new Error('connection reset');
    return define(def);
  };
  return { store, calls: () => calls };
}

const row = { id: 'd1', endpointId: 1, eventId: 'evt_1', eventType: 'constituent.created', attempt: 1, status: 'succeeded' as const, responseStatus: 200, durationMs: 5, error: null, attemptedAt: '2026-01-01T00:00:00.000Z', nextAttemptAt: null };

describe('webhook bookkeeping on the shared read store after a failed start', () => {
  it('defines the delivery log again at the next use, not never', async () => {
    const { store } = flakyStore(1);
    const log = new StoreDeliveryLog(store);
    await expect(log.record([row])).rejects.toThrow('connection reset');
    await log.record([row]);
    expect((await log.list(1, undefined, { page: 1, pageSize: 10 })).items).toEqual([row]);
  });

  it('defines the replay collections again at the next use, not never', async () => {
    const { store } = flakyStore(1);
    const replays = new StoreReplayStore(store);
    await expect(replays.running()).rejects.toThrow('connection reset');
    expect(await replays.running()).toEqual([]);
  });

  it('leaves no rejected promise behind when built on a store that fails and is never used', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { store, calls } = flakyStore(5);
      new StoreDeliveryLog(store);
      new StoreReplayStore(store);
      await new Promise((r) => setTimeout(r, 50));
      expect(calls()).toBe(0);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('the change feed waker after a failed start', () => {
  it('starts again at the next reader when the log did not answer the first', async () => {
    const { FeedWaker } = await import('../../dispatcher/feed-waker.js');
    let failures = 1;
    const log = {
      head: async () => {
        if (failures-- > 0) throw new Error('log unreachable');
        return null;
      },
      subscribe: () => ({ close: async () => undefined }),
    } as unknown as ConstructorParameters<typeof FeedWaker>[0];
    const waker = new FeedWaker(log);
    await expect(waker.ready()).rejects.toThrow('log unreachable');
    await expect(waker.ready()).resolves.toBeUndefined();
  });
});

describe('the webhook queue opened at its first use', () => {
  it('opens at the next use after NATS was away at the first', async () => {
    const { natsAvailable } = await import('./nats-server.js');
    if (!natsAvailable) return;
    const { startNats } = await import('../support/nats.js');
    const { openWebhookState } = await import('../../runtime/webhooks.js');
    const { testConfig } = await import('../../runtime/config.js');
    const { SqliteEventLog } = await import('../../eventlog/sqlite.js');
    const nats = await startNats();
    const closers: Array<() => Promise<void> | void> = [];
    try {
      await nats.halt();
      const log = new SqliteEventLog(':memory:');
      closers.push(() => log.close());
      const state = openWebhookState(testConfig({ natsUrl: nats.url }), new MemoryReadStore(), null, log, new Sealer(Sealer.newKey()), (fn) => closers.push(fn));
      await expect(state.webhookQueue()).rejects.toThrow();
      await nats.resume();
      const queue = await state.webhookQueue();
      expect(await queue.checkpoint()).toBeNull();
      expect(await state.webhookQueue()).toBe(queue);
    } finally {
      for (const c of closers.reverse()) await c();
      await nats.stop();
    }
  }, 30_000);
});

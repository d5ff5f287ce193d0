import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliveryQueue, DeliveryTask, Lease } from '../../dispatcher/queue/port.js';
import { SqliteDeliveryQueue } from '../../dispatcher/queue/sqlite.js';
import { ReplayRunner } from '../../dispatcher/replay-runner.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { until } from './support.js';

const task = (id: string, replay?: string): DeliveryTask => ({ id, endpointId: 1, team: 1, eventId: `evt_${id}_1`, eventType: 'constituent.created', body: '{}', ...(replay ? { replay } : {}) });

describe('the embedded queue with a replay under way', () => {
  it('hands out live tasks before replay tasks queued earlier', async () => {
    const q = new SqliteDeliveryQueue(new Database(':memory:'));
    await q.add(Array.from({ length: 5 }, (_, i) => task(`r${i}`, 'rpl_a')));
    await q.add([task('live')]);
    const seen: string[] = [];
    const c = q.consume(async (l: Lease) => (seen.push(l.task.id), { kind: 'done' }), { concurrency: 1 });
    await until(() => seen.length === 6, 8000, 'every task');
    await c.stop();
    expect(seen[0]).toBe('live');
  });

  it('keeps a quarter of its slots for live tasks while replay tasks hang', async () => {
    const q = new SqliteDeliveryQueue(new Database(':memory:'));
    await q.add(Array.from({ length: 20 }, (_, i) => task(`r${i}`, 'rpl_b')));
    const release: Array<() => void> = [];
    const live: string[] = [];
    const c = q.consume(async (l: Lease) => {
      if (l.task.replay) await new Promise<void>((r) => release.push(r));
      else live.push(l.task.id);
      return { kind: 'done' };
    }, { concurrency: 8 });
    await until(() => release.length === 6, 8000, 'the replay share in flight');
    await q.add([task('live')]);
    await until(() => live.length === 1, 8000, 'the live task, beside the hanging replay tasks');
    expect(release).toHaveLength(6);
    let done = 0;
    while (done < 20) {
      await until(() => release.length > 0, 8000, 'a replay task');
      release.shift()!();
      done++;
    }
    await c.stop();
  });
});

describe('a replay job', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('never has more than its window of tasks outstanding, and is done once every one has finished', async () => {
    const team = await t.team();
    for (let i = 0; i < 30; i++) await team.api.Integration.post('/constituents', { LastName: `N${i}` });
    const ep = (await team.admin.post('/webhook-endpoints', { url: 'http://127.0.0.1:9/none', events: ['*'] })).body.webhookEndpoint.id;
    const { log, deliveries, replays, webhooks } = t.runtime.services;
    const held: DeliveryTask[] = [];
    let settled = 0;
    let most = 0;
    const queue = {
      add: async (tasks: DeliveryTask[]) => {
        held.push(...tasks);
        most = Math.max(most, held.length - settled);
      },
    } as unknown as DeliveryQueue;
    const job = await webhooks.replay(team.id, ep, { from: '2000-01-01T00:00:00Z' });
    const runner = new ReplayRunner({ log, queue, deliveries, replays, window: 8, batch: 4 });
    runner.start();
    try {
      while (settled < 30) {
        await until(() => held.length > settled, 8000, 'a queued replay task');
        const next = held[settled++];
        await replays.settled(job.id, next.id, settled % 5 !== 0);
      }
      await until(async () => (await replays.get(job.id))?.status === 'done', 8000, 'the replay done');
    } finally {
      await runner.stop();
    }
    expect(most).toBeLessThanOrEqual(8);
    expect(new Set(held.map((h) => h.id)).size).toBe(30);
    expect(await webhooks.replayOf(ep, job.id)).toEqual({ id: job.id, status: 'done', queued: 30, sent: 24, failed: 6 });
  });
});

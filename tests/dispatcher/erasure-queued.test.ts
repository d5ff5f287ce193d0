import { describe, expect, it } from 'vitest';
import type { DeliveryQueue } from '../../dispatcher/queue/port.js';
import { Sender } from '../../dispatcher/send.js';
import { attemptDelivery } from '../../dispatcher/worker.js';
import { fastWebhooks, type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

/**
 * decisions.md §17 where the queue cannot rewrite the bodies it holds (NATS JetStream): the
 * erasure records its position there, and a task built as of an earlier event is built again from
 * the log as the erasure left it before it is sent, so no value of the person goes out after the
 * erasure answered. The queue's side runs against a real server in queue.nats.test.ts.
 */
let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

describe('a delivery queued before an erasure, attempted after it', () => {
  it("is sent built again from the erased log (same envelope id, the person's fields null), where the queue says the team had an erasure since", async () => {
    const team = await t.team();
    rx.behave('/queued', () => ({ status: 200 }));
    const endpoint = (await team.admin.post('/webhook-endpoints', { url: rx.url('/queued'), events: ['constituent.created'] })).body.webhookEndpoint.id as number;
    const id = (await team.api.Integration.post('/constituents', { FirstName: 'MkQueuedFirst', Email1: 'mkqueued@example.org' })).body.constituent.PkConstituent as number;
    // The envelope as the dispatcher queued it, before the erasure.
    const first = await until(() => rx.on('/queued')[0]);
    expect(first.raw).toContain('MkQueuedFirst');
    const envelope = JSON.parse(first.raw) as { id: string; type: string };
    expect((await t.admin.post(`/teams/${team.id}/constituents/${id}/erase`, {})).status).toBe(200);
    const erasedAt = (await t.runtime.services.log.readStream(`constituent-${id}`)).at(-1)!.position.prepare;

    const noted: Array<[number, bigint]> = [];
    const queue = (through: bigint | null) =>
      ({ erasedThrough: async (forTeam: number) => (forTeam === team.id ? through : null), noteErasure: async (tm: number, p: bigint) => void noted.push([tm, p]) }) as unknown as DeliveryQueue;
    const sender = new Sender({ timeoutMs: 2000, allowInsecure: true });
    const attempt = async (through: bigint | null, attempt: number) => {
      const outcome = await attemptDelivery(
        { log: t.runtime.services.log, queue: queue(through), deliveries: t.runtime.services.deliveries, sender, mainSealer: t.runtime.services.mainSealer, policy: fastWebhooks() },
        { task: { id: `task-queued-${attempt}`, endpointId: endpoint, team: team.id, eventId: envelope.id, eventType: envelope.type, body: first.raw }, attempt },
      );
      await outcome.written;
      expect(outcome.kind).toBe('done');
      return rx.on('/queued').at(-1)!;
    };
    try {
      // The queue knows of the erasure: built again.
      const after = await attempt(erasedAt, 2);
      expect(after.raw).not.toContain('MkQueued');
      expect(after.raw.toLowerCase()).not.toContain('mkqueued@example.org');
      expect(JSON.parse(after.raw)).toMatchObject({ id: envelope.id, type: 'constituent.created', data: { PkConstituent: id, FirstName: null, Email1: null } });
      // An erasure at an earlier event than the task's (or none) leaves the body as queued.
      expect((await attempt(BigInt(envelope.id.split('_')[1]) / 10n, 3)).raw).toBe(first.raw);
      expect((await attempt(null, 4)).raw).toBe(first.raw);
    } finally {
      sender.close();
    }
  });

  it("rebuilds another person's task of the team byte for byte, and sends nothing where the queue or the log cannot say: a failed attempt with the reason", async () => {
    const team = await t.team();
    rx.behave('/other', () => ({ status: 200 }));
    const endpoint = (await team.admin.post('/webhook-endpoints', { url: rx.url('/other'), events: ['constituent.created'] })).body.webhookEndpoint.id as number;
    const gone = (await team.api.Integration.post('/constituents', { FirstName: 'MkGoneA', Email1: 'mkgonea@example.org' })).body.constituent.PkConstituent as number;
    await team.api.Integration.post('/constituents', { FirstName: 'MkKeptB', LastName: 'Other', Email1: 'mkkeptb@example.org', MailingState: 'IN' });
    const kept = await until(() => rx.on('/other').find((d) => d.raw.includes('MkKeptB')));
    expect((await t.admin.post(`/teams/${team.id}/constituents/${gone}/erase`, {})).status).toBe(200);
    const erasedAt = (await t.runtime.services.log.readStream(`constituent-${gone}`)).at(-1)!.position.prepare;
    const envelope = JSON.parse(kept.raw) as { id: string; type: string };
    const sender = new Sender({ timeoutMs: 2000, allowInsecure: true });
    const said: string[] = [];
    const deps = (queue: Partial<DeliveryQueue>) => ({
      log: t.runtime.services.log,
      queue: queue as DeliveryQueue,
      deliveries: t.runtime.services.deliveries,
      sender,
      mainSealer: t.runtime.services.mainSealer,
      policy: fastWebhooks(),
      report: (m: string) => void said.push(m),
    });
    const task = { id: 'task-other', endpointId: endpoint, team: team.id, eventId: envelope.id, eventType: envelope.type, body: kept.raw };
    try {
      // Built as of an event before the erasure, so built again: the same bytes (another person).
      const sent = rx.on('/other').length;
      const outcome = await attemptDelivery(deps({ erasedThrough: async () => erasedAt }), { task, attempt: 2 });
      await outcome.written;
      expect(outcome.kind).toBe('done');
      expect(rx.on('/other')[sent].raw).toBe(kept.raw);
      // It reads the erasure's own event first, which makes a sealing layer a moment behind let go
      // of the person's key (tests/commands/eventlog.sealed-recent.test.ts), then builds the body.
      const log = t.runtime.services.log;
      const reads: bigint[] = [];
      const watched = new Proxy(log, {
        get: (o, k) =>
          k === 'readTeam'
            ? (team: number, from: { prepare: bigint } | null, ...rest: unknown[]) => (reads.push(from?.prepare ?? -1n), (o.readTeam as (...a: unknown[]) => unknown).call(o, team, from, ...rest))
            : typeof Reflect.get(o, k) === 'function'
              ? Reflect.get(o, k).bind(o)
              : Reflect.get(o, k),
      });
      const watchedAttempt = await attemptDelivery({ ...deps({ erasedThrough: async () => erasedAt }), log: watched }, { task: { ...task, id: 'task-watched' }, attempt: 2 });
      await watchedAttempt.written;
      expect(reads[0]).toBe(erasedAt);
      expect(reads.slice(1)).toContain(BigInt(envelope.id.split('_')[1]) / 10n);
      // The queue's record out of reach: nothing sent; the attempt fails with the reason, recorded
      // and retried as any (after the review of e4e1863: a deferral counted nothing, for ever).
      const before = rx.on('/other').length;
      const failed = await attemptDelivery(deps({ erasedThrough: async () => Promise.reject(new Error('NATS is away')) }), { task: { ...task, id: 'task-waits' }, attempt: 1 });
      expect(failed).toMatchObject({ kind: 'retry' });
      await failed.written;
      expect(rx.on('/other').length).toBe(before);
      expect(said.join('\n')).toContain('NATS is away');
      const recorded = (await t.runtime.services.deliveries.list(endpoint, 'failed', { page: 1, pageSize: 10 })).items;
      expect(JSON.stringify(recorded)).toContain("not sent: its body could not be checked against the team's erasures (NATS is away)");
      // Its event not readable in the team's events (past the log's end here; on EventStoreDB a
      // link that trails): the attempt fails after a short wait, to be retried, rather than
      // holding a worker's slot for the erasure's 30 s (which outlasts this test's time-out).
      const ahead = (await t.runtime.services.log.head())!.prepare + 1_000n;
      const waited = Date.now();
      const unread = await attemptDelivery(deps({ erasedThrough: async () => ahead + 1n }), { task: { ...task, id: 'task-unread', eventId: `evt_${ahead * 10n}_0` }, attempt: 1 });
      expect(unread).toMatchObject({ kind: 'retry' });
      await unread.written;
      expect(Date.now() - waited).toBeLessThan(15_000);
      expect(rx.on('/other').length).toBe(before);
      expect(said.join('\n')).toContain(`not readable up to log position ${ahead}`);
    } finally {
      sender.close();
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableEndpoint } from '../../commands/webhook-endpoints.js';
import type { Delivery } from '../../dispatcher/deliveries.js';
import type { DeliveryQueue } from '../../dispatcher/queue/port.js';
import { Sender } from '../../dispatcher/send.js';
import { attemptDelivery, type WorkerDeps } from '../../dispatcher/worker.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { fastWebhooks, type Receiver, startReceiver } from './support.js';

const HOUR = 3_600_000;

/**
 * The failing-hours rule of decisions.md 12, one attempt at a time on the real stores, with the
 * worker's clock set ahead: as the worker sees it, the endpoint was made active that long ago.
 * (The queue plays no part in it; the end-to-end tests on both queues are endpoint-health.test.ts.)
 */
describe('auto-disabling an endpoint that has failed for TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS', () => {
  let t: TestApp;
  let rx: Receiver;
  let sender: Sender;
  beforeAll(async () => {
    t = await startTestApp();
    rx = await startReceiver();
    sender = new Sender({ timeoutMs: 2000, allowInsecure: true });
  });
  afterAll(async () => {
    sender.close();
    await t.close();
    await rx.close();
  });

  const deps = (hoursAhead: number): WorkerDeps => ({
    log: t.runtime.services.log,
    queue: null as unknown as DeliveryQueue, // not used by one attempt
    deliveries: t.runtime.services.deliveries,
    sender,
    mainSealer: t.runtime.services.mainSealer,
    policy: fastWebhooks(),
    now: () => new Date(Date.now() + hoursAhead * HOUR),
    disable: { endpoint: (target, reason) => disableEndpoint(t.runtime.services, target, reason), afterMs: 120 * HOUR },
  });

  async function failingEndpoint(path: string) {
    const team = await t.team();
    rx.behave(path, () => ({ status: 500 }));
    const id = (await team.admin.post('/webhook-endpoints', { url: rx.url(path), events: ['*'] })).body.webhookEndpoint.id as number;
    let n = 0;
    const attempt = (d: WorkerDeps) =>
      attemptDelivery(d, { task: { id: `task-${path}-${++n}`, endpointId: id, team: team.id, eventId: `evt_${n}_1`, eventType: 'constituent.created', body: '{}' }, attempt: 1 });
    const view = async () => (await team.admin.get(`/webhook-endpoints/${id}`)).body.webhookEndpoint;
    return { team, id, attempt, view };
  }

  const failedRow = (endpointId: number, id: string, attemptedAt: Date): Delivery => ({
    id, endpointId, eventId: 'evt_0_1', eventType: 'constituent.created', attempt: 1, status: 'abandoned',
    responseStatus: 500, durationMs: 1, error: 'receiver answered 500', attemptedAt: attemptedAt.toISOString(), nextAttemptAt: null,
  });

  it('disables it once its failures have run that long, and not before', async () => {
    const ep = await failingEndpoint('/down');
    await ep.attempt(deps(0)); // the run of failures begins now
    await ep.attempt(deps(119));
    expect(await ep.view()).toMatchObject({ active: true, disabledReason: null });
    await ep.attempt(deps(121));
    expect(await ep.view()).toMatchObject({ active: false, disabledReason: 'failing', disabledAt: expect.any(String) });
    const outbox = (await ep.team.admin.get('/outbox')).body.notifications;
    expect(outbox).toContainEqual(expect.objectContaining({ kind: 'endpoint_disabled', endpointId: ep.id, to: null, status: 'skipped' }));
  });

  it('starts the count again after a success', async () => {
    const ep = await failingEndpoint('/recovered');
    await t.runtime.services.deliveries.record([failedRow(ep.id, `dlv_old_${ep.id}`, new Date())]);
    rx.behave('/recovered', () => ({ status: 204 }));
    await ep.attempt(deps(60));
    rx.behave('/recovered', () => ({ status: 500 }));
    await ep.attempt(deps(61));
    await ep.attempt(deps(121));
    expect(await ep.view()).toMatchObject({ active: true, disabledReason: null });
  });

  it('counts from when the endpoint was made active (created, or re-enabled), not from failures before', async () => {
    const ep = await failingEndpoint('/fresh');
    // Failures logged 130 hours before it was made active (as a re-enabled endpoint's would be).
    await t.runtime.services.deliveries.record([failedRow(ep.id, `dlv_before_${ep.id}`, new Date(Date.now() - 130 * HOUR))]);
    await ep.attempt(deps(0));
    expect(await ep.view()).toMatchObject({ active: true, disabledReason: null });
    await ep.attempt(deps(121));
    expect((await ep.view()).disabledReason).toBe('failing');
  });

  it('counts a re-enabled endpoint\'s run from its first failure since, not from the enable: a quiet spell longer than the period is no failure (review of §12)', async () => {
    const ep = await failingEndpoint('/quiet');
    await ep.attempt(deps(0)); // a failure, then the operator disables it and enables it again
    for (const active of [false, true]) expect((await ep.team.admin.patch(`/webhook-endpoints/${ep.id}`, { active })).status).toBe(200);
    // Nothing to send for 200 hours, then a first attempt fails: it has not failed for the period.
    await ep.attempt(deps(200));
    expect(await ep.view()).toMatchObject({ active: true, disabledReason: null });
    await ep.attempt(deps(319));
    expect(await ep.view()).toMatchObject({ active: true, disabledReason: null });
    await ep.attempt(deps(321));
    expect((await ep.view()).disabledReason).toBe('failing');
  });
});

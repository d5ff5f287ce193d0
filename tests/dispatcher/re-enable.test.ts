import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableEndpoint } from '../../commands/webhook-endpoints.js';
import { seqOfEnvelopeId } from '../../dispatcher/envelope.js';
import { type DeliveryQueue, type DeliveryTask, liveTaskId } from '../../dispatcher/queue/port.js';
import { Sender } from '../../dispatcher/send.js';
import { attemptDelivery, type WorkerDeps } from '../../dispatcher/worker.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { fastWebhooks, type Receiver, startReceiver, until } from './support.js';

/**
 * decisions.md §12, "re-enabling does not resend by itself; a replay does", one attempt at a time
 * on the real stores: a task queued before a disable, whose retry comes due after the endpoint is
 * enabled again. (The queue plays no part in it: the check is the worker's. End to end on both
 * queues: endpoint-health.test.ts.)
 */
describe('an attempt after the endpoint was disabled and enabled again', () => {
  let t: TestApp;
  let rx: Receiver;
  let sender: Sender;
  let deps: WorkerDeps;
  beforeAll(async () => {
    t = await startTestApp();
    rx = await startReceiver();
    sender = new Sender({ timeoutMs: 2000, allowInsecure: true });
    deps = {
      log: t.runtime.services.log,
      queue: null as unknown as DeliveryQueue, // not used by one attempt
      deliveries: t.runtime.services.deliveries,
      sender,
      mainSealer: t.runtime.services.mainSealer,
      policy: fastWebhooks(),
    };
  });
  afterAll(async () => {
    sender.close();
    await t.close();
    await rx.close();
  });

  type Team = Awaited<ReturnType<TestApp['team']>>;
  async function endpoint(path: string) {
    const team = await t.team();
    const r = await team.admin.post('/webhook-endpoints', { url: rx.url(path), events: ['constituent.created'] });
    expect(r.status, r.raw).toBe(201);
    return { team, id: r.body.webhookEndpoint.id as number };
  }
  /** A constituent.created envelope of the team, as the change feed (and the dispatcher) built it. */
  async function created(team: Team, name: string): Promise<{ id: string; body: string; position: bigint }> {
    const made = await team.api.Integration.post('/constituents', { LastName: name });
    expect(made.status, made.raw).toBe(201);
    const envelope = await until(async () => (await team.admin.get('/changes?types=constituent.created')).body.changes.find((c: any) => c.data.LastName === name));
    return { id: envelope.id, body: JSON.stringify(envelope), position: seqOfEnvelopeId(envelope.id)! / 10n };
  }
  const live = (team: Team, ep: number, e: { id: string; body: string; position: bigint }): DeliveryTask => ({
    id: liveTaskId(e.position, 'constituent.created', ep),
    endpointId: ep,
    team: team.id,
    eventId: e.id,
    eventType: 'constituent.created',
    body: e.body,
  });
  const patch = (team: Team, ep: number, active: boolean) => team.admin.patch(`/webhook-endpoints/${ep}`, { active }).then((r) => expect(r.status, r.raw).toBe(200));
  /** One attempt, with its record written. */
  const attempt = async (task: DeliveryTask, n: number) => {
    const outcome = await attemptDelivery(deps, { task, attempt: n });
    await outcome.written;
    return outcome;
  };
  const logged = async (team: Team, ep: number) => (await team.admin.get(`/webhook-endpoints/${ep}/deliveries`)).body.deliveries;

  it('abandons a live retry of an event written before a PATCH disabled it, and sends what comes after', async () => {
    const { team, id } = await endpoint('/patched');
    const before = await created(team, 'Before');
    await patch(team, id, false);
    await patch(team, id, true);
    const after = await created(team, 'After');
    expect(await attempt(live(team, id, before), 2)).toMatchObject({ kind: 'done', delivered: false });
    expect(await attempt(live(team, id, after), 1)).toMatchObject({ kind: 'done', delivered: true });
    expect(rx.on('/patched').map((h) => h.json.data.LastName)).toEqual(['After']);
    expect((await logged(team, id)).find((d: any) => d.eventId === before.id)).toMatchObject({
      attempt: 2,
      status: 'abandoned',
      error: 'endpoint was disabled after this event; delivery stopped (a replay sends it)',
      nextAttemptAt: null,
    });
  });

  it('abandons it after an auto-disable and a re-enable alike', async () => {
    const { team, id } = await endpoint('/auto');
    const before = await created(team, 'Before');
    await disableEndpoint(t.runtime.services, { id, team: team.id }, 'gone');
    await patch(team, id, true);
    expect(await attempt(live(team, id, before), 3)).toMatchObject({ kind: 'done', delivered: false });
    expect(rx.on('/auto')).toHaveLength(0);
  });

  it('still sends a replay\u2019s task and a resend of that event: the operator asked for them', async () => {
    const { team, id } = await endpoint('/asked');
    const before = await created(team, 'Before');
    await patch(team, id, false);
    await patch(team, id, true);
    const task = live(team, id, before);
    const replayed = { ...task, id: `${before.id}.${id}.rpl_x`, replay: 'rpl_x' };
    const resent = { ...task, id: `resend.x.${before.id}.${id}` };
    for (const asked of [replayed, resent]) expect(await attempt(asked, 1)).toMatchObject({ kind: 'done', delivered: true });
    expect(rx.on('/asked').map((h) => h.raw)).toEqual([before.body, before.body]);
  });

  it('sends a live retry when the endpoint stayed active (a PATCH of other fields)', async () => {
    const { team, id } = await endpoint('/kept');
    const before = await created(team, 'Before');
    expect((await team.admin.patch(`/webhook-endpoints/${id}`, { description: 'renamed' })).status).toBe(200);
    expect(await attempt(live(team, id, before), 2)).toMatchObject({ kind: 'done', delivered: true });
    expect(rx.on('/kept')).toHaveLength(1);
  });
});

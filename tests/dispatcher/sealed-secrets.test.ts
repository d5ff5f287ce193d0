import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { openSecret, SecretUnopenable, unopenableSecrets } from '../../dispatcher/secrets.js';
import { attemptDelivery } from '../../dispatcher/worker.js';
import type { DeliveryQueue } from '../../dispatcher/queue/port.js';
import { Sender } from '../../dispatcher/send.js';
import { webhookEndpointStream } from '../../domain/webhook-endpoint/events.js';
import { NO_STREAM } from '../../eventlog/port.js';
import { Sealer } from '../../eventlog/sealing.js';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../../projections/webhook-endpoints.js';
import { fastWebhooks, type Receiver, until, useWebhookApp, type WebhookApp } from './support.js';

/**
 * decisions.md §17, secrets at rest: every generation of an endpoint's signing secret is sealed
 * under the main key in the log and the read models; the answers to create and rotate (and the
 * endpoint's GET) carry the plaintext, deliveries are signed with it, and a process whose main
 * key does not open a secret sends nothing to that endpoint.
 */
let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});

type Team = Awaited<ReturnType<WebhookApp['team']>>;

const verifies = (d: { raw: string; headers: object }, secret: string) => {
  try {
    new Webhook(secret).verify(d.raw, d.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

async function deliveredTo(team: Team, path: string, FirstName: string) {
  await team.api.Integration.post('/constituents', { FirstName });
  const [d] = await rx.waitFor((r) => r.path === path && r.json?.data?.FirstName === FirstName);
  return d;
}

describe('signing secrets sealed at rest', () => {
  it('keeps every generation sealed in the log and the read model, and signs with the plaintext the API answered', async () => {
    const team = await t.team();
    const created = await team.admin.post('/webhook-endpoints', { url: rx.url('/sealed'), events: ['constituent.created'] });
    expect(created.status).toBe(201);
    const id = created.body.webhookEndpoint.id as number;
    const first = created.body.secret as string;
    const second = (await team.admin.post(`/webhook-endpoints/${id}/rotate-secret`, { expiresInSeconds: 600 })).body.secret as string;
    expect(second).toMatch(/^whsec_/);

    const events = await t.runtime.services.log.readStream(webhookEndpointStream(id));
    const stored = events.map((e) => (e.data as { secret?: string }).secret).filter((s) => s !== undefined);
    expect(stored).toHaveLength(2);
    const doc = await t.runtime.services.store.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, id);
    expect(doc!._secrets.map((s) => s.generation)).toEqual([2, 1]);
    for (const value of [...stored, ...doc!._secrets.map((s) => s.secret)]) {
      expect(Sealer.isSealedText(value)).toBe(true);
      for (const plain of [first, second]) {
        expect(value).not.toContain(plain);
        expect(value).not.toContain(plain.slice('whsec_'.length));
      }
    }

    expect((await team.admin.get(`/webhook-endpoints/${id}`)).body.secret).toBe(second);
    const d = await deliveredTo(team, '/sealed', 'Sealed');
    expect(verifies(d, second)).toBe(true);
    expect(verifies(d, first)).toBe(true);
    expect((d.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
  });

  it('still signs with a secret written in plaintext before sealing existed', async () => {
    const team = await t.team();
    const { services } = t.runtime;
    const id = await services.ids.next('webhook_endpoint');
    const plain = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const metadata = { team: team.id, source: 'Application' as const, keyName: null, correlationId: 'before-sealing', at: new Date().toISOString() };
    const r = await services.log.append(
      webhookEndpointStream(id),
      [{ type: 'WebhookEndpointCreated', data: { id, url: rx.url('/plain'), events: ['constituent.created'], active: true, description: null, secret: plain }, metadata }],
      NO_STREAM,
    );
    await services.settle(r.position);
    expect((await team.admin.get(`/webhook-endpoints/${id}`)).body.secret).toBe(plain);
    expect(verifies(await deliveredTo(team, '/plain', 'Plain'), plain)).toBe(true);
    expect(await unopenableSecrets(services.store, new Sealer(Sealer.newKey()))).not.toContain(id);
  });

  it('sends nothing to an endpoint whose secret another main key sealed: the attempt fails with the reason, is retried, and never disables it', async () => {
    const team = await t.team();
    rx.behave('/other-key', () => ({ status: 200 }));
    const id = (await team.admin.post('/webhook-endpoints', { url: rx.url('/other-key'), events: ['*'] })).body.webhookEndpoint.id as number;
    const otherKey = new Sealer(Sealer.newKey());
    const said: string[] = [];
    const disabled: number[] = [];
    const sender = new Sender({ timeoutMs: 2000, allowInsecure: true });
    try {
      // Two attempts: the second finds the first's failure recorded, which with afterMs 0 would
      // disable the endpoint were a key mismatch counted like a receiver's failure.
      for (const attempt of [1, 2]) {
        const outcome = await attemptDelivery(
          {
            log: t.runtime.services.log,
            queue: null as unknown as DeliveryQueue, // not used by one attempt
            deliveries: t.runtime.services.deliveries,
            sender,
            mainSealer: otherKey,
            policy: fastWebhooks(),
            report: (m) => said.push(m),
            disable: { endpoint: async (target) => void disabled.push(target.id), afterMs: 0 },
          },
          { task: { id: 'task-other-key', endpointId: id, team: team.id, eventId: 'evt_1_1', eventType: 'constituent.created', body: '{}' }, attempt },
        );
        expect(outcome.kind).toBe('retry');
        await outcome.written;
      }
    } finally {
      sender.close();
    }
    expect(rx.on('/other-key')).toHaveLength(0);
    expect(disabled).toEqual([]);
    expect(said.join('\n')).toContain(`endpoint ${id}'s signing secret was sealed under another main key`);
    expect(said.join('\n')).toContain('TURNOUT_MAIN_KEY');
    const failed = await until(async () => (await team.admin.get(`/webhook-endpoints/${id}/deliveries?status=failed`)).body.deliveries[0]);
    expect(failed.error).toMatch(/^not sent: .*another main key/);
    expect(await unopenableSecrets(t.runtime.services.store, otherKey)).toContain(id);
    expect(await unopenableSecrets(t.runtime.services.store, t.runtime.services.mainSealer)).toEqual([]);
  });

  it('binds a sealed secret to its endpoint and generation: copied to another, it does not open', async () => {
    const team = await t.team();
    const a = (await team.admin.post('/webhook-endpoints', { url: rx.url('/a'), events: ['*'] })).body.webhookEndpoint.id as number;
    const doc = await t.runtime.services.store.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, a);
    const sealer = t.runtime.services.mainSealer;
    expect(openSecret(sealer, a, doc!._secrets[0])).toMatch(/^whsec_/);
    expect(() => openSecret(sealer, a + 1, doc!._secrets[0])).toThrow(SecretUnopenable);
    expect(() => openSecret(sealer, a, { ...doc!._secrets[0], generation: 2 })).toThrow(SecretUnopenable);
  });
});

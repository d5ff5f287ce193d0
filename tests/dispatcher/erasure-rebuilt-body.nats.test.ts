import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsDeliveryQueue } from '../../dispatcher/queue/nats.js';
import type { DeliveryTask, Handled } from '../../dispatcher/queue/port.js';
import { type NatsServer, startNats } from '../support/nats.js';
import { natsAvailable } from './nats-server.js';
import { until } from './support.js';

// Review of 84fc954 / e4e1863: a retry after a rebuilt attempt must be queued with the rebuilt body.
// When the attempt's record write fails (handled.written rejects), nats.ts's catch replaces the
// outcome with { retry, 1000 } without the body: the old body (the person's values) is republished.
describe.skipIf(!natsAvailable)('NATS retry after a rebuilt attempt whose record write failed', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('is queued with the rebuilt body, not the one with the erased values', async () => {
    const q = await NatsDeliveryQueue.connect(server.url, { prefix: 'REV25G' });
    const t: DeliveryTask = { id: 'rv1', endpointId: 1, team: 1, eventId: 'evt_420_1', eventType: 'constituent.created', body: '{"FirstName":"ErasedPerson"}' };
    await q.add([t]);
    const seen: Array<{ attempt: number; body: string }> = [];
    const c = q.consume(async (l): Promise<Handled> => {
      seen.push({ attempt: l.attempt, body: l.task.body });
      if (seen.length === 1) {
        const written = Promise.reject(new Error('delivery log write failed'));
        written.catch(() => undefined);
        return { kind: 'retry', delayMs: 300, body: '{"FirstName":null}', written };
      }
      return { kind: 'done' };
    }, { concurrency: 1 });
    await until(() => seen[1], 20_000, 'the retry');
    await c.stop();
    await q.close();
    expect(seen[1].body).toBe('{"FirstName":null}');
  }, 40_000);
});

import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsThrottle } from '../../runtime/throttle-nats.js';
import { natsAvailable } from '../dispatcher/nats-server.js';
import { type NatsServer, startNats } from '../support/nats.js';

/** How much later than its admission a busy event loop may let the test observe a send. */
const SCHEDULING_SLACK_MS = 50;

describe.skipIf(!natsAvailable)('the endpoint throttle shared through NATS (maxPerSecond, decisions.md 12)', () => {
  let server: NatsServer;
  const connections: NatsConnection[] = [];
  beforeAll(async () => {
    server = await startNats();
  });
  afterAll(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await server?.stop();
  });

  it('lets two worker processes together send no more than the limit in any second', async () => {
    const workers = await Promise.all(
      [0, 1].map(async () => {
        const nc = await connect({ servers: server.url });
        connections.push(nc);
        return NatsThrottle.open(nc);
      }),
    );
    const sent: number[] = [];
    let deferred = 0;
    // Each worker runs four attempts at once for the same endpoint, three rounds each.
    await Promise.all(
      workers.flatMap((w) =>
        Array.from({ length: 4 }, async () => {
          for (let round = 0; round < 3; round++) {
            const turn = await w.admit(42, 3);
            if (turn.go) sent.push(Date.now());
            else deferred++;
          }
        }),
      ),
    );
    sent.sort((a, b) => a - b);
    expect(sent.length).toBeGreaterThan(3);
    expect(sent.length + deferred).toBe(24);
    // The throttle spaces the instants it admits at; the test sees each a moment later, once its
    // promise has run, and that moment stretches on a loaded machine. A broken throttle lets the
    // four sends of a round through together (gaps near 0), far below this.
    for (let i = 3; i < sent.length; i++) expect(sent[i] - sent[i - 3], `sends ${i - 3} and ${i}`).toBeGreaterThanOrEqual(1000 - SCHEDULING_SLACK_MS);
  }, 30_000);
});

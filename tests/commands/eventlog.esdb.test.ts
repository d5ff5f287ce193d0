import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { EventStoreDBClient } from '@eventstore/db-client';
import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EsdbEventLog } from '../../eventlog/esdb.js';
import { ANY, type NewEvent, NO_STREAM } from '../../eventlog/port.js';
import { type RecordedEvent } from '../../domain/shared/events.js';
import { IMAGES } from '../support/containers.js';
import { dockerAvailable } from '../support/docker.js';
import { eventLogContract, until } from './eventlog.contract.js';

const IMAGE = IMAGES.eventstore;
const docker = await dockerAvailable();
if (!docker.ok) console.warn(`skipping EventStoreDB tests: no Docker engine reachable (${docker.reason})`);

const event = (type: string): NewEvent => ({
  type,
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

describe.skipIf(!docker.ok)('the EventStoreDB event log (container)', () => {
  let container: StartedTestContainer;
  let host = '';
  let port = 0;
  const url = () => `esdb://${host}:${port}?tls=false`;

  beforeAll(async () => {
    container = await new GenericContainer(IMAGE)
      .withEnvironment({
        EVENTSTORE_INSECURE: 'true',
        EVENTSTORE_RUN_PROJECTIONS: 'All',
        EVENTSTORE_MEM_DB: 'true',
        EVENTSTORE_CLUSTER_SIZE: '1',
      })
      .withExposedPorts(2113)
      .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
      .withStartupTimeout(120_000)
      .start();
    host = container.getHost();
    port = container.getMappedPort(2113);
    // Live is not yet leader: poll with a write until the node takes one.
    const probe = EsdbEventLog.connect(url());
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        try {
          await probe.append('warmup', [event('Warmup')], ANY);
          break;
        } catch (err) {
          if (Date.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    } finally {
      await probe.close();
    }
  }, 180_000);

  afterAll(async () => {
    await container?.stop();
  });

  // One server for the suite: the contract keeps each test to its own streams and types.
  eventLogContract(
    'EsdbEventLog',
    async () => {
      const log = EsdbEventLog.connect(url(), { retryInitialMs: 20, retryMaxMs: 200 });
      return { log, cleanup: () => log.close() };
    },
    { shared: true },
  );

  it('resubscribes after the connection drops and delivers each event once, in order', async () => {
    const relay = await tcpRelay(host, port);
    const writer = EsdbEventLog.connect(url());
    const follower = EsdbEventLog.connect(`esdb://127.0.0.1:${relay.port}?tls=false`, { retryInitialMs: 20, retryMaxMs: 200 });
    try {
      const s = `cart-${randomUUID()}`;
      const seen: RecordedEvent[] = [];
      const sub = follower.subscribe(await writer.head(), (e) => void (e.stream === s && seen.push(e)));
      await writer.append(s, [event('A')], NO_STREAM);
      await until('A arrived', () => seen.length === 1);
      relay.cut();
      await writer.append(s, [event('B')], 0n);
      await writer.append(s, [event('C')], 1n);
      await until('B and C arrived through a new connection', () => seen.length >= 3, 30_000);
      expect(seen.map((e) => e.type)).toEqual(['A', 'B', 'C']);
      expect(relay.connections()).toBeGreaterThan(1);
      await sub.stop();
    } finally {
      await follower.close();
      await writer.close();
      await relay.close();
    }
  });

  it('leaves system events out of head()', async () => {
    const log = EsdbEventLog.connect(url());
    const client = EventStoreDBClient.connectionString(url());
    try {
      const s = `cart-${randomUUID()}`;
      await log.append(s, [event('A')], NO_STREAM);
      const [a] = await log.readStream(s);
      // Stream metadata is written as a $metadata event to $$<stream>: a system event, newer than A.
      await client.setStreamMetadata(s, { maxCount: 10 });
      expect(await log.head()).toEqual(a.position);
    } finally {
      await client.dispose();
      await log.close();
    }
  });
});

/** A TCP relay in front of the server, so a test can cut its open connections as a network fault would. */
async function tcpRelay(targetHost: string, targetPort: number) {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((downstream) => {
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    for (const s of [downstream, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        downstream.destroy();
        upstream.destroy();
      });
    }
    downstream.pipe(upstream).pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        cut();
        server.close(() => resolve());
      }),
  };
}

import { GenericContainer, type StartedTestContainer, Wait } from 'testcontainers';
import { dockerAvailable } from './docker.js';

/**
 * The servers of `npm run test:containers`, as the compose file pins them (override with
 * TURNOUT_*_IMAGE). Every suite that needs one asks here, so they all test what production runs.
 */
export const IMAGES = {
  eventstore: process.env.TURNOUT_ESDB_IMAGE ?? 'eventstore/eventstore:24.10.4-jammy',
  mongo: process.env.TURNOUT_MONGO_IMAGE ?? 'mongo:7.0.16',
  nats: process.env.TURNOUT_NATS_IMAGE ?? 'nats:2.10.24-alpine',
};

/** A throwaway MongoDB server, or null (with the reason printed) where no Docker engine answers. */
export async function startMongo(suite: string): Promise<{ url: string; stop(): Promise<void> } | null> {
  const docker = await dockerAvailable();
  if (!docker.ok) {
    console.warn(`skipping ${suite} on MongoDB: no Docker engine reachable (${docker.reason})`);
    return null;
  }
  const container = await new GenericContainer(IMAGES.mongo)
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
    .withStartupTimeout(120_000)
    .start();
  return { url: `mongodb://${container.getHost()}:${container.getMappedPort(27017)}/turnout_test`, stop: () => container.stop().then(() => undefined) };
}

/** nats-server with JetStream in a container: for `npm run test:containers` (TURNOUT_NATS_CONTAINER=1). */
export async function startNatsContainer(): Promise<{ container: StartedTestContainer; url: string; monitorUrl: string; port: number }> {
  const container = await new GenericContainer(IMAGES.nats)
    .withCommand(['-js', '-m', '8222'])
    .withExposedPorts(4222, 8222)
    .withWaitStrategy(Wait.forHttp('/healthz?js-enabled-only=true', 8222))
    .withStartupTimeout(60_000)
    .start();
  const host = container.getHost();
  const port = container.getMappedPort(4222);
  return { container, port, url: `nats://${host}:${port}`, monitorUrl: `http://${host}:${container.getMappedPort(8222)}` };
}

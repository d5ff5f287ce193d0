import { existsSync } from 'node:fs';
import { startNats } from '../support/nats.js';

export const NATS_BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';
/** A local nats-server, or containers asked for (npm run test:containers; tests/support/nats.ts says which ran). */
export const natsAvailable = existsSync(NATS_BIN) || process.env.TURNOUT_NATS_CONTAINER === '1';
if (!natsAvailable) console.log(`NATS tests skipped: no nats-server binary at ${NATS_BIN}`);

/** A real JetStream server on a free port with its own store directory, started by the test itself. */
export async function startNatsServer(): Promise<{ url: string; stop(): Promise<void> }> {
  return startNats();
}

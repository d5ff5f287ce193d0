import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startReceiver } from '../dispatcher/support.js';
import { type NatsServer, startNats } from './nats.js';
import { buildService, spawnTurnout, type TurnoutProcess } from './process.js';

export interface ProductOnNats {
  nats: NatsServer;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  turnout: TurnoutProcess;
  stop(): Promise<void>;
}

/**
 * The built product in a process of its own on a local nats-server (a temporary data dir, a
 * webhook receiver, retries shrunk to milliseconds), as the NATS outage tests run it; `env` adds
 * to or overrides its environment (the rate limits on or off).
 */
export async function startProductOnNats(name: string, env: NodeJS.ProcessEnv = {}): Promise<ProductOnNats> {
  const [build, nats, receiver] = await Promise.all([buildService(), startNats(), startReceiver()]);
  const dataDir = mkdtempSync(path.join(tmpdir(), `turnout-${name}-`));
  const stop = async () => {
    await turnout?.stop();
    await receiver.close();
    await nats.stop();
    build.remove();
    rmSync(dataDir, { recursive: true, force: true });
  };
  let turnout: TurnoutProcess | undefined;
  try {
    turnout = await spawnTurnout(build, {
      env: { TURNOUT_DATA_DIR: dataDir, TURNOUT_NATS_URL: nats.url, TURNOUT_WEBHOOK_ALLOW_INSECURE: '1', TURNOUT_WEBHOOK_RETRY_BASE_MS: '100', TURNOUT_WEBHOOK_RETRY_MAX_MS: '500', ...env },
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { nats, receiver, turnout, stop };
}

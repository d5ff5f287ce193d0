import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A free TCP port on 127.0.0.1 (asked of the OS, then released for the caller to bind). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it returns true; fails with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 200);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

export interface NatsServer {
  /** nats://127.0.0.1:<port> */
  url: string;
  port: number;
  /** http://127.0.0.1:<port> of the monitoring endpoint (/healthz, /jsz). */
  monitorUrl: string;
  storeDir: string;
  process: ChildProcess;
  /** Stops the server and removes its store directory. */
  stop(): Promise<void>;
  /** Stops the server (SIGTERM), keeping its store directory, as an outage would. */
  halt(): Promise<void>;
  /** Starts a halted server again on the same ports and store directory. */
  resume(): Promise<void>;
}

export interface NatsOptions {
  /** Extra configuration file text (say, an `authorization` block). */
  config?: string;
}

const NATS_BIN = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/**
 * Starts a real nats-server with JetStream on free ports and a fresh store directory, and resolves
 * once its /healthz says JetStream is ready. Output is kept for the error when it fails to start.
 */
export async function startNats(options: NatsOptions = {}): Promise<NatsServer> {
  if (process.env.TURNOUT_NATS_CONTAINER === '1' && !options.config) {
    const { dockerAvailable } = await import('./docker.js');
    const docker = await dockerAvailable();
    if (docker.ok) return startInContainer();
    console.warn(`NATS from the local nats-server, not a container: no Docker engine reachable (${docker.reason})`);
  }
  const [port, monitor] = [await freePort(), await freePort()];
  const storeDir = mkdtempSync(path.join(tmpdir(), 'turnout-nats-'));
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-m', String(monitor), '-sd', storeDir];
  if (options.config) {
    const file = path.join(storeDir, 'server.conf');
    writeFileSync(file, options.config);
    args.unshift('-c', file);
  }
  const monitorUrl = `http://127.0.0.1:${monitor}`;
  let running = await spawnNats(args, monitorUrl);
  const halt = () => running.stop();
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorUrl,
    storeDir,
    process: running.child,
    halt,
    resume: async () => {
      running = await spawnNats(args, monitorUrl);
      server.process = running.child;
    },
    stop: async () => {
      await halt();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
  return server;
}

async function spawnNats(args: string[], monitorUrl: string): Promise<{ child: ChildProcess; stop(): Promise<void> }> {
  const child = spawn(NATS_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  let exited = false;
  // If the test process ends without stopping it (a crash, a killed run), take the server along.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      process.removeListener('exit', orphanGuard);
      resolve();
    }),
  );
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      await Promise.race([exit, new Promise((r) => setTimeout(r, 5_000))]);
      if (!exited) child.kill('SIGKILL');
      await exit;
    }
  };
  try {
    await waitUntil('nats-server to be ready', async () => {
      if (exited) throw new Error(`nats-server exited: ${output}`);
      const r = await fetch(`${monitorUrl}/healthz?js-enabled-only=true`);
      return r.ok;
    });
  } catch (err) {
    await stop();
    throw err;
  }
  return { child, stop };
}

/** The same server in a container (npm run test:containers). An outage is the local binary's to play. */
async function startInContainer(): Promise<NatsServer> {
  const { startNatsContainer } = await import('./containers.js');
  const { container, url, port, monitorUrl } = await startNatsContainer();
  const unsupported = async () => {
    throw new Error('halt/resume need the local nats-server (a restarted container maps new ports)');
  };
  return { url, port, monitorUrl, storeDir: '', process: null as unknown as ChildProcess, halt: unsupported, resume: unsupported, stop: () => container.stop().then(() => undefined) };
}

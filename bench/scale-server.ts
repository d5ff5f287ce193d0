import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The real server (`node dist/api/server.js`) as a child process, for the scale benchmark. */
export interface ServerProcess {
  child: ChildProcess;
  origin: string;
  /** performance.now() just before the spawn. */
  startedAt: number;
  output(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts the server on a known free port (so probing can begin at once), rate limits off, request logs off; `nodeArgs` go before the script (a probe to load, a CPU profile). */
export async function startServer(server: string, dataDir: string, adminToken: string, nodeArgs: string[] = []): Promise<ServerProcess> {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, server], {
    env: {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      PORT: String(port),
      TURNOUT_DATA_DIR: dataDir,
      TURNOUT_ADMIN_TOKEN: adminToken,
      TURNOUT_RATE_LIMIT_PER_SECOND: '0',
      TURNOUT_RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return {
    child,
    origin: `http://127.0.0.1:${port}`,
    startedAt,
    output: () => out,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(kill, 60_000);
        await exit;
        clearTimeout(timer);
      }
      process.removeListener('exit', kill);
    },
  };
}

/** Polls `path` until it answers 200; the milliseconds from the spawn. Throws if the server exits or `limitMs` passes. */
export async function until200(s: ServerProcess, path: string, limitMs = 600_000, onOther?: (status: number, body: string) => void): Promise<number> {
  for (;;) {
    if (s.child.exitCode !== null) throw new Error(`the server exited (${s.child.exitCode}):\n${s.output()}`);
    try {
      const r = await fetch(s.origin + path);
      const body = await r.text();
      if (r.status === 200) return performance.now() - s.startedAt;
      onOther?.(r.status, body);
    } catch {
      // Not listening yet.
    }
    if (performance.now() - s.startedAt > limitMs) throw new Error(`${path} did not answer 200 within ${limitMs} ms:\n${s.output()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Peak and current resident memory of a process, in MB (Linux /proc). */
export function memory(pid: number): { peakMb: number; nowMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peakMb: kb('VmHWM') / 1024, nowMb: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

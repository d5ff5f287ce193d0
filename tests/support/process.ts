import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll } from 'vitest';
import { freePort, waitUntil } from './nats.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Build {
  /** The compiled api/server.js. */
  server: string;
  remove(): void;
}

/**
 * Compiles the service (tsconfig.build.json) into a directory of its own, so that test files
 * building at the same time, and whoever runs `npm run build`, never overwrite each other's output.
 * It lives under node_modules/.cache so the compiled files resolve the project's packages.
 * A type error elsewhere in the tree does not stop tsc emitting; the processes then show whether
 * what they need works.
 */
export async function buildService(): Promise<Build> {
  // `npm test` typechecks by compiling everything once; its output serves every suite here, so
  // the suites do not each compile the service (slow on a loaded machine).
  const shared = process.env.TURNOUT_TEST_BUILD;
  if (shared && existsSync(path.join(ROOT, shared, 'api', 'server.js')))
    return { server: path.join(ROOT, shared, 'api', 'server.js'), remove: () => undefined };
  const outDir = path.join(ROOT, 'node_modules', '.cache', 'turnout-test-dist', `${process.pid}-${Date.now()}`);
  mkdirSync(outDir, { recursive: true });
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json', '--outDir', outDir], { cwd: ROOT, maxBuffer: 16 << 20 }).catch(
    (err: { stdout?: string }) => ({ stdout: err.stdout ?? String(err) }),
  );
  const server = path.join(outDir, 'api', 'server.js');
  if (!existsSync(server)) throw new Error(`the build produced no api/server.js:\n${result.stdout}`);
  return { server, remove: () => rmSync(outDir, { recursive: true, force: true }) };
}

export interface TurnoutProcess {
  /** http://127.0.0.1:<port>: the API, or only /healthz and /readyz for background roles. */
  url: string;
  role: string;
  process: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then waits for it to exit (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

export interface SpawnOptions {
  role?: 'all' | 'api' | 'projector' | 'dispatcher';
  env?: Record<string, string | undefined>;
  /** Resolve once /readyz says ready (the default), or already once /healthz answers. */
  ready?: boolean;
}

/** Starts a Turnout process from a build, on a free port, and waits until it serves. */
export async function spawnTurnout(build: Build, options: SpawnOptions = {}): Promise<TurnoutProcess> {
  const role = options.role ?? 'all';
  const port = await freePort();
  const child = spawn(process.execPath, [build.server, '--role', role], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, NODE_ENV: 'test', HOST: '127.0.0.1', PORT: String(port), TURNOUT_ADMIN_TOKEN: 'test-admin-token', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  let exited: number | string | null = null;
  // If the test process ends without stopping it (a crash, a killed run), take the child along.
  const orphanGuard = () => child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = code ?? signal ?? 'exit';
      process.removeListener('exit', orphanGuard);
      resolve();
    }),
  );
  // 'close' comes once stdout and stderr are drained: a refusal's reason is then all in `out`.
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const proc: TurnoutProcess = {
    url,
    role,
    process: child,
    output: () => out,
    stop: async () => {
      if (exited === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
    },
  };
  try {
    const probe = options.ready === false ? '/healthz' : '/readyz';
    // A process that exits ends the wait at once: waitUntil retries on a throw, so a refusal to
    // start would otherwise be reported only when the 30 s ran out.
    await waitUntil(`turnout --role ${role} ${probe}`, async () => exited !== null || (await fetch(url + probe)).ok, 30_000);
    if (exited !== null) {
      await closed;
      throw new Error(`turnout --role ${role} exited (${exited}):\n${out}`);
    }
  } catch (err) {
    await proc.stop();
    throw err instanceof Error && !err.message.includes(out) && out ? new Error(`${err.message}\n--- output ---\n${out}`) : err;
  }
  return proc;
}

/** A small JSON client for a spawned process. */
export function http(base: string, token?: string) {
  const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(base + url, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: r.status, body: json, headers: r.headers, raw: text };
  };
  return {
    get: (u: string) => call('GET', u),
    post: (u: string, b?: unknown, headers?: Record<string, string>) => call('POST', u, b, headers),
    patch: (u: string, b?: unknown, headers?: Record<string, string>) => call('PATCH', u, b, headers),
    del: (u: string) => call('DELETE', u),
  };
}

/**
 * The built service for one test file, with the data dirs and processes its tests make: built
 * before the file's tests, and every process stopped and every dir removed after them.
 */
export function useBuiltService(dirPrefix: string) {
  let build: Build | undefined;
  const dirs: string[] = [];
  const running: TurnoutProcess[] = [];
  beforeAll(async () => {
    build = await buildService();
  }, 180_000);
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    build?.remove();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return {
    /** A new empty data dir, removed after the file. */
    freshDir(): string {
      const d = mkdtempSync(path.join(tmpdir(), dirPrefix));
      dirs.push(d);
      return d;
    },
    /** A file of the build, such as `cli/main.js`. */
    built(file: string): string {
      if (!build) throw new Error('useBuiltService: the build is made in beforeAll');
      return path.join(path.dirname(path.dirname(build.server)), file);
    },
    /** A server process of the build, stopped after the file. */
    async start(options: SpawnOptions = {}): Promise<TurnoutProcess> {
      if (!build) throw new Error('useBuiltService: the build is made in beforeAll');
      const p = await spawnTurnout(build, options);
      running.push(p);
      return p;
    },
  };
}

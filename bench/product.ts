import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp, type App } from '../api/app.js';
import { testConfig } from '../runtime/config.js';
import { startRoles } from '../runtime/roles.js';
import { openRuntime, type Runtime } from '../runtime/wiring.js';

export const ADMIN = 'bench-admin-token';

export interface Product {
  app: App;
  runtime: Runtime;
  origin: string;
  /** The data dir (the log file and the read models). */
  dir: string;
  team: number;
  /** `Authorization` header of a read_write key of `team`. */
  auth: string;
  close(): Promise<void>;
}

/**
 * The whole product as `npm start` runs it (every role in one process) on the embedded stores,
 * with the event log in a real file (durability is what the write benchmark is about) and rate
 * limits off, listening on loopback. One team with a read_write key, made through /admin/v1.
 */
export async function startProduct(options: { metrics?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Product> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-'));
  const config = testConfig({ dataDir: dir, adminToken: ADMIN, rateLimitPerSecond: 0, rateLimitPerMinute: 0 });
  // `metrics` and `env` (tracing's OTEL_* variables) for the observability bench's variants.
  const runtime = await openRuntime(config, { onProjectionError: (err) => console.error('projection failed', err), metrics: options.metrics, env: options.env });
  await startRoles(config, runtime);
  const app = await buildApp(runtime.services);
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const t = await app.inject({ method: 'POST', url: '/admin/v1/teams', headers: admin, payload: { name: 'Bench' } });
  if (t.statusCode !== 201) throw new Error(`creating the team: ${t.statusCode} ${t.body}`);
  const team = t.json().team.id as number;
  const k = await app.inject({ method: 'POST', url: `/admin/v1/teams/${team}/api-keys`, headers: admin, payload: { name: 'Bench', scope: 'read_write' } });
  if (k.statusCode !== 201) throw new Error(`issuing the key: ${k.statusCode} ${k.body}`);
  return {
    app,
    runtime,
    origin,
    dir,
    team,
    auth: `Bearer ${k.json().key as string}`,
    async close() {
      await app.close();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

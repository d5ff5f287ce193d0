import type { LightMyRequestResponse } from 'fastify';
import { buildApp, type App } from '../../api/app.js';
import { type TestConfigOverrides, testConfig } from '../../runtime/config.js';
import { openRuntime, type Runtime } from '../../runtime/wiring.js';

export interface Reply {
  status: number;
  body: any;
  headers: LightMyRequestResponse['headers'];
  raw: string;
}

export interface Client {
  get(url: string): Promise<Reply>;
  post(url: string, body?: unknown, opts?: { raw?: string; headers?: Record<string, string> }): Promise<Reply>;
  patch(url: string, body?: unknown, opts?: { raw?: string; headers?: Record<string, string> }): Promise<Reply>;
  del(url: string, body?: unknown): Promise<Reply>;
}

export interface TestApp {
  app: App;
  runtime: Runtime;
  admin: Client;
  /** A new team with one key per [name, scope]; `api[name]` calls /api/v1 with that key. */
  team(keys?: Array<[string, 'read_write' | 'read_only']>): Promise<{ id: number; api: Record<string, Client>; admin: Client; keys: Record<string, any> }>;
  close(): Promise<void>;
}

function client(app: App, base: string, token?: string): Client {
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown, opts: { raw?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    let payload: string | undefined;
    if (opts.raw !== undefined) payload = opts.raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    const r = await app.inject({ method, url: base + url, headers, payload });
    let parsed: unknown = r.body;
    try {
      parsed = r.body ? JSON.parse(r.body) : null;
    } catch {
      /* not JSON */
    }
    return { status: r.statusCode, body: parsed, headers: r.headers, raw: r.body };
  };
  return {
    get: (u) => call('GET', u),
    post: (u, b, o) => call('POST', u, b, o),
    patch: (u, b, o) => call('PATCH', u, b, o),
    del: (u, b) => call('DELETE', u, b),
  };
}

/** The whole product on embedded stores (SQLite in memory), driven through inject. */
export async function startTestApp(overrides: TestConfigOverrides = {}, hooks: Parameters<typeof openRuntime>[1] = {}): Promise<TestApp> {
  const config = testConfig(overrides);
  const runtime = await openRuntime(config, hooks);
  const app = await buildApp(runtime.services);
  const admin = client(app, '/admin/v1', config.adminToken);
  let n = 0;
  return {
    app,
    runtime,
    admin,
    async team(keys = [['Integration', 'read_write']]) {
      const t = await admin.post('/teams', { name: `Team ${++n}` });
      if (t.status !== 201) throw new Error(`team: ${t.status} ${t.raw}`);
      const id = t.body.team.id as number;
      const api: Record<string, Client> = {};
      const made: Record<string, any> = {};
      for (const [name, scope] of keys) {
        const k = await admin.post(`/teams/${id}/api-keys`, { name, scope });
        if (k.status !== 201) throw new Error(`key: ${k.status} ${k.raw}`);
        made[name] = k.body;
        api[name] = client(app, '/api/v1', k.body.key);
      }
      return { id, api, keys: made, admin: client(app, `/admin/v1/teams/${id}`, config.adminToken) };
    },
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}

export { client };

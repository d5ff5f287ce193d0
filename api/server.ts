import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Fastify from 'fastify';
import { buildApp } from './app.js';
import { type Config, loadConfig } from '../runtime/config.js';
import { startRoles } from '../runtime/roles.js';
import { healthRoutes } from './routes/health.js';
import { hardenServer, serverOptions } from './transport.js';
import { openRuntime } from '../runtime/wiring.js';

/**
 * The admin token: TURNOUT_ADMIN_TOKEN, or one generated on first start and kept in the data
 * directory. It is printed once, when generated; later starts say where it is.
 */
function adminToken(config: Config): { token: string; note: string } {
  if (config.adminToken) return { token: config.adminToken, note: 'admin token: from TURNOUT_ADMIN_TOKEN' };
  mkdirSync(config.dataDir, { recursive: true });
  const file = path.resolve(config.dataDir, 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), note: `admin token: in ${file}` };
  const token = 'adm_' + randomBytes(24).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  return { token, note: `admin token (shown once, kept in ${file}): ${token}` };
}

async function main() {
  const config = loadConfig();
  const { token, note } = adminToken(config);
  config.adminToken = token;
  const runtime = await openRuntime(config, { onProjectionError: (err) => console.error('projection failed', err) });
  await startRoles(config, runtime);

  let close = async () => runtime.close();
  if (config.role === 'all' || config.role === 'api') {
    const app = await buildApp(runtime.services, {
      logger: process.env.NODE_ENV === 'test' ? false : { level: process.env.LOG_LEVEL ?? 'info', redact: ['req.headers.authorization'] },
    });
    const address = await app.listen({ port: config.port, host: config.host });
    console.log(`Turnout (${config.role}) listening on ${address}  public API ${address}/api/v1  admin ${address}/admin/v1`);
    console.log(note);
    close = async () => {
      await app.close();
      await runtime.close();
    };
  } else {
    // Background roles answer only the probes (/healthz, /readyz), for the orchestrator.
    const health = Fastify({ logger: false, ...serverOptions(config.connections) });
    hardenServer(health.server, config.connections);
    await health.register(healthRoutes(runtime.services));
    const address = await health.listen({ port: config.port, host: config.host });
    console.log(`Turnout (${config.role}) running; health checks on ${address}/healthz and ${address}/readyz`);
    close = async () => {
      await health.close();
      await runtime.close();
    };
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down`);
    await close().catch((err) => console.error('shutdown failed', err));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App } from './app.js';
import type { EarlyPort } from './early-port.js';
import type { Shutdown } from './shutdown.js';
import type { Config } from '../runtime/config.js';
import { startRoles } from '../runtime/roles.js';
import { readiness } from './routes/health.js';
import { watchProgress } from '../projections/engine/progress.js';
import { secureDataDir } from '../runtime/private-files.js';
import { openRuntime } from '../runtime/wiring.js';

/**
 * The admin token: TURNOUT_ADMIN_TOKEN, or one generated on first start and kept in the data
 * directory. It is printed once, when generated; later starts say where it is.
 */
function adminToken(config: Config): { token: string; note: string } {
  if (config.adminToken) return { token: config.adminToken, note: 'admin token: from TURNOUT_ADMIN_TOKEN' };
  secureDataDir(config.dataDir);
  const file = path.resolve(config.dataDir, 'admin-token');
  if (existsSync(file)) return { token: readFileSync(file, 'utf8').trim(), note: `admin token: in ${file}` };
  const token = 'adm_' + randomBytes(24).toString('base64url');
  writeFileSync(file, token + '\n', { mode: 0o600 });
  return { token, note: `admin token (shown once, kept in ${file}): ${token}` };
}

/**
 * Start order: the port is already open (api/server.ts, answering the probes), the
 * stores open (quick) while the routes' modules load, the routes are built (their schemas are
 * compiled at their first use: api/lazy-schemas.ts) and take over the port, and only then do the read
 * models catch up with the log, so /readyz says how far they are behind meanwhile. The
 * background roles (webhooks, mail) start once they have caught up.
 */
export async function serve(config: Config, port: EarlyPort, shutdown: Shutdown): Promise<void> {
  if (shutdown.stopping) return;
  const { token, note } = adminToken(config);
  config.adminToken = token;
  const opening = shutdown.during(
    openRuntime(config, {
      follow: false,
      onProjectionError: (err) => console.error('projection failed', err),
      // Progress lines come from watchProgress below, in one format for every follower.
      onReadModelProgress: () => {},
    }),
  );
  // The routes' modules load while the stores open: that wait is mostly the projector thread
  // starting on a core of its own, and this thread would spend it idle (decisions.md §13).
  const serving = config.role === 'all' || config.role === 'api';
  const appModule = serving ? shutdown.during(import('./app.js')) : null;
  // Should the runtime fail first, its error is the one reported.
  appModule?.catch(() => undefined);
  const runtime = await opening;
  // After the app: the port stops answering (the probes too), then the stores close.
  shutdown.onStop(async () => {
    await port.close();
    await runtime.close();
  });
  const metrics = runtime.services.metrics;
  port.probes(() => readiness(runtime.services), metrics && { token, contentType: metrics.contentType, text: () => metrics.text() });
  if (shutdown.stopping) return;

  let built: App | null = null;
  const { buildApp, schemasOfApp } = (await appModule) ?? {};
  if (buildApp) {
    let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
    const app: App = await shutdown.during(
      buildApp(runtime.services, {
        logger: process.env.NODE_ENV === 'test' ? false : { level: config.logLevel },
        serverFactory: (h) => ((handler = h), port.server),
      }).then(async (a) => (await a.ready(), a)),
    );
    built = app;
    shutdown.onStop(() => app.close());
    if (shutdown.stopping) return;
    port.serve(handler!);
    console.log(`Turnout (${config.role}) listening on ${port.address}  public API ${port.address}/api/v1  admin ${port.address}/admin/v1  console ${port.address}/console`);
    console.log(note);
  } else {
    // Background roles answer only the probes (/healthz, /readyz), for the orchestrator, and /metrics.
    console.log(`Turnout (${config.role}) running; health checks on ${port.address}/healthz and ${port.address}/readyz, metrics on ${port.address}/metrics`);
  }
  let progress: ReturnType<typeof watchProgress> | null = null;
  shutdown.onStop(() => progress?.stop());

  // The catch-up may take minutes: a stop does not wait for it (closing the runtime ends it).
  await runtime.startFollowing();
  progress = watchProgress({ followers: runtime.services.followers, settled: () => !runtime.services.starting?.(), report: (line) => console.log(line) });
  await runtime.readModelsCaughtUp();
  if (shutdown.stopping) return;
  await shutdown.during(startRoles(config, runtime));
  runtime.started();
  console.log(readyLine());
  // The schemas no request has used yet are compiled now, between requests (api/lazy-schemas.ts).
  const schemas = built && schemasOfApp?.(built);
  if (schemas) {
    const { failed } = await schemas.compileAll(() => shutdown.stopping);
    for (const f of failed) console.error(`a route's schema does not compile: ${f}`);
  }
}

/**
 * How long the start took, from the process's own start (decisions.md §13: /readyz 200 within
 * 3 s), and the CPU it took, every thread's: the steadier figure on a shared machine.
 */
function readyLine(): string {
  const cpu = process.cpuUsage();
  return `ready ${Math.round(process.uptime() * 1000)} ms after the process started (CPU ${Math.round((cpu.user + cpu.system) / 1000)} ms)`;
}

import path from 'node:path';
import { staleSource } from './fresh-build.js';

/**
 * The entry point (`npm start`, the image's ENTRYPOINT). It refuses a build older than its
 * sources before loading anything else (stale modules could fail to load, or run old code), then
 * opens the port before loading the rest, so that /healthz answers within a second of the start.
 */
const stale = staleSource(path.resolve(import.meta.dirname, '..'));
if (stale) {
  console.error(`The build is out of date: ${stale.file} ${stale.reason}. Run \`npm run build\`, then start again.`);
  process.exit(1);
}
try {
  // A closed stdout (the reader went away) must not crash the process, nor keep it from closing.
  (await import('./logging.js')).survivePipeErrors();
  const { loadConfig } = await import('../runtime/config.js');
  const config = loadConfig();
  // The signal handlers come before the port: a stop at any moment from here on exits cleanly.
  const { Shutdown } = await import('./shutdown.js');
  const shutdown = new Shutdown();
  const { EarlyPort } = await import('./early-port.js');
  const port = await shutdown.during(EarlyPort.open(config.port, config.host, config.connections));
  shutdown.onStop(() => port.close());
  const { serve } = await shutdown.during(import('./serve.js'));
  await serve(config, port, shutdown);
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
}

import path from 'node:path';
import { staleSource } from './fresh-build.js';

/**
 * The entry point (`npm start`, the image's ENTRYPOINT). It refuses a build older than its
 * sources before loading anything else: stale modules could fail to load, or run old code.
 */
const stale = staleSource(path.resolve(import.meta.dirname, '..'));
if (stale) {
  console.error(`The build is out of date: ${stale.file} ${stale.reason}. Run \`npm run build\`, then start again.`);
  process.exit(1);
}
await import('./serve.js');

#!/usr/bin/env node
// `npx turnout`: the package's bin runs the compiled CLI (cli/main.ts), built by `npm run build`.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('turnout: the CLI is not built yet; run `npm run build` in the Turnout folder first.\n');
  process.exit(1);
}
await import(main.href);

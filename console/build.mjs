// Bundles the console (console/src, Preact) into <outDir> beside its page and stylesheet.
// `npm run build` writes dist/console; the e2e tests build a copy of their own.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function buildConsole(outDir) {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [path.join(here, 'src', 'main.tsx')],
    outfile: path.join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    target: 'es2022',
    minify: true,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'warning',
  });
  for (const file of ['index.html', 'app.css', 'favicon.svg']) copyFileSync(path.join(here, file), path.join(outDir, file));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsole(process.argv[2] ?? path.join(here, '..', 'dist', 'console'));
}

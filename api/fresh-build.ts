import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Written by `npm run build` once tsc has finished: the build is as new as this file. */
export const BUILD_STAMP = '.build-stamp';

const SOURCE = /\.(ts|js|mts|mjs)$/;

/**
 * The first source file changed after the build in `outDir`, or null when the build is fresh or
 * cannot be checked. `npm start` runs the compiled files without compiling, so a
 * source edited since `npm run build` must stop the start rather than run old code silently.
 * The check applies only to the project's own build (`<root>/dist` beside tsconfig.build.json):
 * an image without the sources, or a test build elsewhere, is not checked. It stats a few hundred
 * files: a few milliseconds.
 */
export function staleSource(outDir: string): { file: string; reason: string } | null {
  const root = path.dirname(outDir);
  const tsconfig = path.join(root, 'tsconfig.build.json');
  if (!existsSync(tsconfig)) return null;
  const markers = [BUILD_STAMP, '.tsbuildinfo'].map((f) => path.join(outDir, f)).filter((f) => existsSync(f));
  if (markers.length === 0) return { file: outDir, reason: 'has no build stamp' };
  const built = Math.max(...markers.map((f) => statSync(f).mtimeMs));
  for (const folder of includedFolders(tsconfig)) {
    const newer = newerThan(path.join(root, folder), built);
    if (newer) return { file: path.relative(root, newer), reason: 'changed after the last build' };
  }
  return null;
}

/** The folders tsconfig.build.json compiles (its `include`, which holds no globs). */
function includedFolders(tsconfig: string): string[] {
  // tsconfig files may hold comments: strip whole-line ones before parsing.
  const text = readFileSync(tsconfig, 'utf8').replace(/^\s*\/\/.*$/gm, '');
  const include = (JSON.parse(text) as { include?: unknown }).include;
  return Array.isArray(include) ? include.filter((f): f is string => typeof f === 'string') : [];
}

function newerThan(dir: string, time: number): string | null {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const e of entries) {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name === 'node_modules') continue;
      const found = newerThan(file, time);
      if (found) return found;
    } else if (SOURCE.test(e.name) && statSync(file).mtimeMs > time) return file;
  }
  return null;
}

import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BUILD_STAMP, staleSource } from '../../api/fresh-build.js';
import { buildService } from '../support/process.js';

const dirs: string[] = [];
const removals: Array<() => void> = [];
afterAll(() => {
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
  removals.forEach((r) => r());
});

/** A project as `npm run build` leaves it: sources in api/ and domain/ a minute old, the build in dist/ stamped now. */
function project(options: { stamp?: boolean; tsconfig?: boolean } = {}) {
  const root = mkdtempSync(path.join(os.tmpdir(), 'turnout-fresh-'));
  dirs.push(root);
  const past = Date.now() / 1000 - 60;
  if (options.tsconfig !== false) writeFileSync(path.join(root, 'tsconfig.build.json'), '{\n  // comments are allowed\n  "extends": "./tsconfig.json",\n  "include": ["domain", "api"]\n}\n');
  for (const f of ['domain/rules.ts', 'api/app.ts', 'api/nested/route.ts', 'api/README.md']) {
    mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    writeFileSync(path.join(root, f), '// source\n');
    utimesSync(path.join(root, f), past, past);
  }
  mkdirSync(path.join(root, 'dist', 'api'), { recursive: true });
  if (options.stamp !== false) writeFileSync(path.join(root, 'dist', BUILD_STAMP), 'built\n');
  const touch = (f: string) => utimesSync(path.join(root, f), Date.now() / 1000 + 5, Date.now() / 1000 + 5);
  return { root, dist: path.join(root, 'dist'), touch };
}

describe('checking that the build is as new as its sources', () => {
  it('passes a build made after every source', () => {
    expect(staleSource(project().dist)).toBeNull();
  });

  it('names a source file, however deep, changed after the build', () => {
    const p = project();
    p.touch('api/nested/route.ts');
    expect(staleSource(p.dist)).toEqual({ file: path.join('api', 'nested', 'route.ts'), reason: 'changed after the last build' });
  });

  it('ignores files that are not sources and folders the build does not include', () => {
    const p = project();
    p.touch('api/README.md');
    mkdirSync(path.join(p.root, 'tests'));
    writeFileSync(path.join(p.root, 'tests', 'late.test.ts'), '');
    expect(staleSource(p.dist)).toBeNull();
  });

  it('refuses a build that has no stamp', () => {
    const p = project({ stamp: false });
    expect(staleSource(p.dist)).toEqual({ file: p.dist, reason: 'has no build stamp' });
  });

  it('skips the check where the sources are not shipped (the image)', () => {
    expect(staleSource(project({ tsconfig: false, stamp: false }).dist)).toBeNull();
  });
});

describe('npm start on a stale build', () => {
  it('exits 1 before loading the server, naming the file and the command that fixes it', async () => {
    const build = await buildService();
    removals.push(() => build.remove());
    const p = project();
    for (const f of ['server.js', 'fresh-build.js']) copyFileSync(path.join(path.dirname(build.server), f), path.join(p.dist, 'api', f));
    writeFileSync(path.join(p.dist, 'package.json'), '{"type":"module"}\n');
    const run = () =>
      promisify(execFile)(process.execPath, [path.join(p.dist, 'api', 'server.js')], { cwd: p.root }).then(
        () => ({ code: 0, stderr: '' }),
        (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
      );
    p.touch('domain/rules.ts');
    const stale = await run();
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(`The build is out of date: ${path.join('domain', 'rules.ts')} changed after the last build. Run \`npm run build\``);
    // Fresh again, it goes on to load the rest of the server (absent from this copy, so that fails instead).
    utimesSync(path.join(p.dist, BUILD_STAMP), Date.now() / 1000 + 10, Date.now() / 1000 + 10);
    const fresh = await run();
    expect(fresh.stderr).not.toContain('out of date');
    expect(fresh.stderr).toContain('Cannot find module');
  });
});

import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The verifier a subscriber installs (packages/webhooks-verify): its own tests pass, and the
 * tarball `npm pack` makes installs into an empty project and verifies a signature there, with
 * nothing else of Turnout around it.
 */
const run = promisify(execFile);
const pkg = path.resolve(import.meta.dirname, '../../packages/webhooks-verify');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the webhook verifier package', () => {
  it('passes its own tests (node --test, no dependencies)', async () => {
    const { stdout } = await run(process.execPath, ['--test', 'test/'], { cwd: pkg });
    expect(stdout).toMatch(/# fail 0/);
    expect(stdout).toMatch(/# pass [1-9]/);
  }, 60_000);

  it('packs into a tarball that works in an empty project', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-verify-pkg-'));
    dirs.push(dir);
    // `npm pack` works offline: the package has no dependencies to resolve.
    await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: pkg, env: { ...process.env, npm_config_offline: 'true' } });
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    const installed = path.join(dir, 'app', 'node_modules', '@turnout', 'webhooks-verify');
    mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', path.join(dir, tarball), '-C', installed, '--strip-components=1']);
    expect(readdirSync(installed).sort()).toEqual(['README.md', 'index.d.ts', 'index.js', 'package.json']);
    writeFileSync(
      path.join(dir, 'app', 'check.mjs'),
      `import { signatureHeader, verifyWebhook } from '@turnout/webhooks-verify';
const t = Math.floor(Date.now() / 1000);
const header = signatureHeader('{"id":"evt_1"}', ['whsec_new', 'whsec_old'], t);
console.log(verifyWebhook({ rawBody: Buffer.from('{"id":"evt_1"}'), header, secret: 'whsec_old' }));`,
    );
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: path.join(dir, 'app') });
    expect(stdout.trim()).toBe('true');
  }, 60_000);
});

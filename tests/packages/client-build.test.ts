import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render } from '../../packages/client/scripts/generate.mjs';
import { startTestApp, type TestApp } from '../support/app.js';
import { listen } from './client-support.js';

/**
 * @turnout/client as a package: its generated types match what the server serves, its types
 * refuse a wrong create, and `npm pack` makes a tarball that installs offline into an empty
 * project beside the verifier's and runs there against a real server.
 */
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PKG = path.join(ROOT, 'packages/client');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');
const dirs: string[] = [];
const tempDir = (name: string) => {
  const d = mkdtempSync(path.join(tmpdir(), `turnout-client-${name}-`));
  dirs.push(d);
  return d;
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** tsc over one project file; its diagnostics, '' when clean. */
async function typecheck(tsconfig: object, dir: string): Promise<string> {
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
  return run(process.execPath, [TSC, '-p', dir], { cwd: dir }).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string }) => err.stdout || String(err),
  );
}

describe('the SDK\u2019s generated types', () => {
  it('are what openapi-typescript makes of the served OpenAPI document (npm run generate when this fails)', async () => {
    const served = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(served.statusCode).toBe(200);
    const fresh = await render(served.json());
    const committed = readFileSync(path.join(PKG, 'src/openapi.ts'), 'utf8');
    // A short message on failure: the diff of a 300 KB file helps nobody.
    expect(fresh === committed, 'packages/client/src/openapi.ts is stale: run `npm run build && npm run generate --prefix packages/client`').toBe(true);
  });
});

describe('the package, packed and installed offline into an empty project with the verifier', () => {
  let app: string;
  let installed: string;
  beforeAll(async () => {
    const dir = tempDir('pack');
    const offline = { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
    // The client's prepack builds it (tsc to dist/, with .d.ts): a build that fails fails here.
    await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PKG, env: offline, maxBuffer: 16 << 20 });
    await run('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: path.join(ROOT, 'packages/webhooks-verify'), env: offline });
    const tarballs = readdirSync(dir).sort();
    expect(tarballs).toEqual(['turnout-client-1.0.0.tgz', 'turnout-webhooks-verify-1.0.0.tgz']);
    const files = (await run('tar', ['-tzf', path.join(dir, tarballs[0])])).stdout.split('\n').filter(Boolean).sort();
    expect(files).toEqual(expect.arrayContaining(['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/browser.js', 'package/dist/openapi.d.ts', 'package/README.md']));
    expect(files.filter((f) => !f.startsWith('package/dist/') && !['package/README.md', 'package/package.json'].includes(f))).toEqual([]);
    app = path.join(dir, 'app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'integrator', private: true, type: 'module' }));
    installed = (await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs.map((f) => path.join(dir, f))], { cwd: app, env: offline })).stdout.trim();
  }, 180_000);

  it('has types that refuse a wrong field or type in a create, and accept the right ones', async () => {
    // The fixture, as an integrator's file: importing the installed package, checked by tsc
    // against its shipped .d.ts. An @ts-expect-error line that compiles is itself an error
    // (TS2578), so this fails when a check goes. (The root typecheck checks it against the source.)
    // skipLibCheck, as most projects set it: the package's own build has checked its .d.ts.
    const fixture = readFileSync(path.join(ROOT, 'tests/packages/fixtures/client-types.ts'), 'utf8');
    expect((fixture.match(/@ts-expect-error/g) ?? []).length).toBeGreaterThanOrEqual(5);
    writeFileSync(path.join(app, 'fixture.ts'), fixture.replace("'../../../packages/client/src/index.js'", "'@turnout/client'"));
    expect(readFileSync(path.join(app, 'fixture.ts'), 'utf8')).toContain("from '@turnout/client'");
    const out = await typecheck(
      { compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], types: [], strict: true, noEmit: true, skipLibCheck: true }, files: ['fixture.ts'] },
      app,
    );
    expect(out).toBe('');

    // A browser bundle resolves the `browser` condition, and its types must say what that build
    // exports: verifyWebhook is not there, so importing it fails to compile rather than to bundle.
    writeFileSync(
      path.join(app, 'page.ts'),
      `import { Turnout } from '@turnout/client';
// @ts-expect-error: the browser build leaves verifyWebhook out
import { verifyWebhook } from '@turnout/client';
export const used = [Turnout, verifyWebhook];
`,
    );
    const page = await typecheck(
      { compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', customConditions: ['browser'], lib: ['ES2022', 'DOM'], types: [], strict: true, noEmit: true, skipLibCheck: true }, files: ['page.ts'] },
      app,
    );
    expect(page).toBe('');
  }, 120_000);

  it('runs a first conversation against a real Turnout, and leaves verifyWebhook out of the browser build', async () => {
    const base = await listen(t.app);
    const team = await t.team();
    // Plain JavaScript, as node runs an integrator's file.
    writeFileSync(
      path.join(app, 'check.mjs'),
      `import { Turnout, verifyWebhook } from '@turnout/client';
import { signatureHeader } from '@turnout/webhooks-verify';
const turnout = new Turnout({ baseUrl: '${base}', apiKey: '${team.keys.Integration.key}' });
const { constituent } = await turnout.constituents.create({ FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org' });
console.log('created', constituent.PkConstituent, constituent.ConstituentName);
for await (const c of turnout.constituents.list({ search: 'Lovelace' })) console.log('listed', c.PkConstituent);
await turnout.constituents.create({ LastName: 'X', Email1: 'nope' }).catch((e) => console.log('refused', e.name, e.status, e.code, e.field));
const body = JSON.stringify({ id: 'evt_1_1', type: 'constituent.created', created: 1, team: 1, version: 1, data: constituent });
const envelope = verifyWebhook(body, { 'x-turnout-signature': signatureHeader(body, ['whsec_k'], Math.floor(Date.now() / 1000)) }, 'whsec_k');
console.log('verified', envelope.type);
`,
    );
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: app });
    const browser = await run(process.execPath, ['--conditions=browser', '--input-type=module', '-e', "const m = await import('@turnout/client'); console.log('browser', Object.keys(m).sort().join(','))"], { cwd: app });
    console.log(`npm install: ${installed}\n${stdout}${browser.stdout}`);
    expect(stdout).toMatch(/^created \d+ Ada Lovelace\nlisted \d+\nrefused TurnoutError 400 invalid_field Email1\nverified constituent.created\n$/);
    expect(browser.stdout).toBe('browser Turnout,TurnoutError\n');
  });
});

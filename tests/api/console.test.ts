import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../api/app.js';
import { CONSOLE_CSP } from '../../api/console.js';
import { testConfig } from '../../runtime/config.js';
import { openRuntime, type Runtime } from '../../runtime/wiring.js';

// The console's files as the process serves them (the page itself is driven in tests/console).
let runtime: Runtime;
const apps: App[] = [];
const dirs: string[] = [];
const appServing = async (files: Record<string, string>) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-console-files-'));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) writeFileSync(path.join(dir, name), body);
  const app = await buildApp(runtime.services, { consoleDir: dir });
  apps.push(app);
  return app;
};
beforeAll(async () => void (runtime = await openRuntime(testConfig())));
afterAll(async () => {
  for (const app of apps) await app.close();
  await runtime.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('serving the console', () => {
  it('answers the page and its files with the CSP, and nothing else under /console', async () => {
    const app = await appServing({ 'index.html': '<!doctype html><title>c</title>', 'app.js': 'export {}', 'notes.txt': 'not served' });
    for (const url of ['/console', '/console/']) {
      const r = await app.inject({ url });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toMatch(/^text\/html/);
      expect(r.headers['content-security-policy']).toBe(CONSOLE_CSP);
    }
    const js = await app.inject({ url: '/console/app.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/^text\/javascript/);
    expect(js.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(js.headers['x-content-type-options']).toBe('nosniff');
    for (const url of ['/console/notes.txt', '/console/index.html', '/console/..%2Fpackage.json', '/console/missing.js']) {
      const r = await app.inject({ url });
      expect(r.statusCode, url).toBe(404);
      expect(r.json().error.code, url).toBe('not_found');
    }
  });

  it('says the console is not built when its files are missing', async () => {
    const app = await appServing({});
    const r = await app.inject({ url: '/console' });
    expect(r.statusCode).toBe(503);
    expect(r.json().error).toMatchObject({ code: 'console_not_built', message: expect.stringContaining('npm run build') });
  });

  it('allows nothing but this origin: no other origin, wildcard or scheme in any directive', () => {
    const directives = CONSOLE_CSP.split(';').map((d) => d.trim().split(/\s+/));
    expect(directives[0]).toEqual(['default-src', "'self'"]);
    for (const [, ...sources] of directives) for (const s of sources) expect(s).toMatch(/^'(self|none)'$/);
  });
});

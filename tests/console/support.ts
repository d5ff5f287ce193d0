import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, type TestContext } from 'vitest';
import { buildApp, type App } from '../../api/app.js';
import { testConfig } from '../../runtime/config.js';
import { startDispatcher } from '../../runtime/webhooks.js';
import { openRuntime, type Runtime } from '../../runtime/wiring.js';
import { client, type Client } from '../support/app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
export const CHROMIUM = process.env.TURNOUT_CHROMIUM ?? '/usr/bin/chromium';
/** Launch flags that work in this sandbox and in CI (issue 17): no GPU, no network of Chromium's own. */
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Failed tests leave a screenshot here (CI can keep the folder as an artifact). */
export const ARTIFACTS = process.env.TURNOUT_TEST_ARTIFACTS ?? path.join(tmpdir(), 'turnout-console-artifacts');
export const ADMIN_TOKEN = 'console-admin-token';

export interface ConsoleServer {
  origin: string;
  runtime: Runtime;
  app: App;
  /** The admin API through inject, for setting up and checking what the page did. */
  admin: Client;
  /** A new team, its admin client and `api`, the public API with a read_write key of it. */
  team(name?: string): Promise<{ id: number; admin: Client; api: Client }>;
}

export interface ConsolePage {
  page: Page;
  /** Opens the console at a hash route (`#/teams/3/keys`), signed in unless told otherwise. */
  open(route?: string, options?: { signedIn?: boolean }): Promise<void>;
  /** The browser logs each non-2xx answer as a console error: allow those this test provokes. */
  allowStatus(...statuses: number[]): void;
}

/**
 * One server (the whole product in process on embedded stores, listening on a real port, with the
 * webhook dispatcher) and one Chromium per file, one fresh browser context per test. Every test
 * fails on a console error, an uncaught page error or a request outside the server's origin, and
 * leaves a screenshot in ARTIFACTS when it fails.
 */
export function useConsole(): { server: () => ConsoleServer; browser: () => ConsolePage } {
  let server: ConsoleServer;
  let close: () => Promise<void>;
  let browser: Browser;
  let consoleDir: string;
  let current: ConsolePage;
  let context: BrowserContext;
  let problems: string[] = [];
  let allowed = new Set<number>();

  beforeAll(async () => {
    consoleDir = mkdtempSync(path.join(tmpdir(), 'turnout-console-'));
    await promisify(execFile)(process.execPath, [path.join(ROOT, 'console', 'build.mjs'), consoleDir], { cwd: ROOT });
    const config = testConfig({ adminToken: ADMIN_TOKEN, webhook: { allowInsecure: true, retryBaseMs: 50, retryMaxMs: 200, maxAttempts: 3, timeoutMs: 1000 }, erasureRetry: { initialMs: 50, maxMs: 200 } });
    const runtime = await openRuntime(config);
    const app = await buildApp(runtime.services, { consoleDir });
    await app.listen({ port: 0, host: '127.0.0.1' });
    await startDispatcher(config, runtime, { report: () => undefined });
    const { port } = app.server.address() as import('node:net').AddressInfo;
    const admin = client(app, '/admin/v1', ADMIN_TOKEN);
    let n = 0;
    server = {
      origin: `http://127.0.0.1:${port}`,
      runtime,
      app,
      admin,
      async team(name = `Console team ${++n}`) {
        const t = await admin.post('/teams', { name });
        if (t.status !== 201) throw new Error(`team: ${t.status} ${t.raw}`);
        const id = t.body.team.id as number;
        const teamAdmin = client(app, `/admin/v1/teams/${id}`, ADMIN_TOKEN);
        const k = await teamAdmin.post('/api-keys', { name: 'Integration', scope: 'read_write' });
        if (k.status !== 201) throw new Error(`key: ${k.status} ${k.raw}`);
        return { id, admin: teamAdmin, api: client(app, '/api/v1', k.body.key) };
      },
    };
    close = async () => {
      await app.close();
      await runtime.close();
    };
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
  });

  afterAll(async () => {
    await browser?.close();
    await close?.();
    if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    problems = [];
    allowed = new Set();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.origin });
    const page = await context.newPage();
    // Well inside the test's time-out, so a missing element is named rather than timed out.
    page.setDefaultTimeout(8000);
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const status = /status of (\d{3})/.exec(m.text());
      if (status && m.text().startsWith('Failed to load resource') && allowed.has(Number(status[1]))) return;
      problems.push(`console error: ${m.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('request', (r) => {
      if (new URL(r.url()).origin !== server.origin) problems.push(`request outside the origin: ${r.url()}`);
    });
    current = {
      page,
      allowStatus: (...s) => s.forEach((x) => allowed.add(x)),
      async open(route = '', { signedIn = true } = {}) {
        await page.goto(`${server.origin}/console${route ? `#${route}` : ''}`);
        if (!signedIn) return;
        // As the sign-in form would: the token in this tab's session storage, then the page again.
        await page.evaluate(`sessionStorage.setItem('turnout.adminToken', ${JSON.stringify(ADMIN_TOKEN)})`);
        await page.reload();
      },
    };
  });

  afterEach(async (ctx: TestContext) => {
    const failed = ctx.task.result?.state === 'fail' || problems.length > 0;
    if (failed) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = path.join(ARTIFACTS, `${ctx.task.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}.png`);
      await current.page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      if (existsSync(file)) console.error(`screenshot of the failed test: ${file}`);
    }
    await context.close();
    if (problems.length) throw new Error(`the page misbehaved:\n${problems.join('\n')}`);
  });

  return { server: () => server, browser: () => current };
}

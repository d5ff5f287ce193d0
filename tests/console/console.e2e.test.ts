import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../dispatcher/support.js';
import { unnamedControls } from './a11y.js';
import { ADMIN_TOKEN, useConsole } from './support.js';

// The console in Debian's Chromium against the whole product (decisions.md §13, issue 17 points 1-8).
// Calls added by issue 16 (GET /teams, test, resend, replay, stats, throttle, activity filters)
// are driven in ops.e2e.test.ts.
const { server, browser } = useConsole();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.behave('/fail', () => ({ status: 500, body: 'down' }));
});
afterAll(() => receiver?.close());

describe('serving the console', () => {
  it('answers /console and its assets with a same-origin Content-Security-Policy and no inline code', async () => {
    const { origin } = server();
    const page = await fetch(`${origin}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    const directives = csp.split(';').map((d) => d.trim().split(/\s+/));
    expect(directives).toContainEqual(['default-src', "'self'"]);
    // No directive names another origin, `*` or a scheme: only keywords in quotes.
    for (const [, ...sources] of directives) for (const s of sources) expect(s).toMatch(/^'[a-z-]+'$/);
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const ref of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(ref[1]).toMatch(/^\/console\//);
    for (const asset of ['app.js', 'app.css', 'favicon.svg']) {
      const r = await fetch(`${origin}/console/${asset}`);
      expect(r.status, asset).toBe(200);
      expect(r.headers.get('content-security-policy')).toBe(csp);
    }
    expect((await fetch(`${origin}/console/../package.json`)).status).toBe(404);
    expect((await fetch(`${origin}/console/nothing.js`)).status).toBe(404);
  });
});

describe('signing in', () => {
  it('keeps the token only in the tab session storage, and signing out clears it', async () => {
    const team = await server().team();
    const { page, open } = browser();
    await open(`/teams/${team.id}/keys`, { signedIn: false });
    // Keyboard only: the token field, then Enter.
    await page.getByLabel('Admin token').focus();
    await page.keyboard.type(ADMIN_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    // (Browser code as text: the tests' TypeScript knows Node, not the DOM.)
    const stored = await page.evaluate<{ session: object; local: number; cookie: string; url: string }>('({ session: { ...sessionStorage }, local: localStorage.length, cookie: document.cookie, url: location.href })');
    expect(stored.session).toEqual({ 'turnout.adminToken': ADMIN_TOKEN });
    expect(stored.local).toBe(0);
    expect(stored.cookie).toBe('');
    expect(stored.url).not.toContain(ADMIN_TOKEN);
    expect(await page.context().cookies()).toEqual([]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.reload();
    await page.getByLabel('Admin token').waitFor();
  });

  it('says in words that a wrong token was refused', async () => {
    const team = await server().team();
    const { page, open, allowStatus } = browser();
    allowStatus(401);
    await open(`/teams/${team.id}/keys`, { signedIn: false });
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/admin token was refused/i);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });
});

describe('API keys', () => {
  it('creates a key shown once with a copy button, lists it, and revokes it', async () => {
    const team = await server().team();
    const { page, open } = browser();
    await open(`/teams/${team.id}/keys`);
    await page.getByLabel('Key name').fill('Reporting');
    await page.getByLabel('Scope').selectOption('read_only');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('textbox', { name: 'New API key' });
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key.length).toBeGreaterThan(20);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);

    const listed = (await team.admin.get('/api-keys')).body.apiKeys.filter((k: { name: string }) => k.name === 'Reporting');
    expect(listed).toMatchObject([{ name: 'Reporting', scope: 'read_only', revokedAt: null }]);
    await page.getByRole('cell', { name: 'read_only' }).waitFor();

    // Never again, not even after a reload.
    await page.reload();
    await page.getByRole('cell', { name: 'Reporting', exact: true }).waitFor();
    expect(await page.getByRole('textbox', { name: 'New API key' }).count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    expect(await page.evaluate<string>('JSON.stringify({ ...sessionStorage })')).not.toContain(key);

    await page.getByRole('button', { name: 'Revoke key Reporting' }).click();
    await page.getByRole('button', { name: 'Revoke key Reporting' }).waitFor({ state: 'detached' });
    const revoked = (await team.admin.get('/api-keys')).body.apiKeys.find((k: { name: string }) => k.name === 'Reporting');
    expect(revoked.revokedAt).not.toBeNull();
  });
});

describe('webhook endpoints', () => {
  it('creates, edits, disables, enables and rotates an endpoint', async () => {
    const team = await server().team();
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints`);
    await page.getByLabel('Endpoint URL').fill(receiver.url('/ok'));
    await page.getByLabel('Event types').fill('constituent.created, constituent.updated');
    await page.getByLabel('Description').fill('CRM sync');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    const [ep] = (await team.admin.get('/webhook-endpoints')).body.webhookEndpoints;
    expect(ep).toMatchObject({ url: receiver.url('/ok'), events: ['constituent.created', 'constituent.updated'], description: 'CRM sync', active: true });

    await page.getByRole('link', { name: `Open endpoint ${receiver.url('/ok')}` }).click();
    await page.getByLabel('Description').fill('CRM sync, nightly');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.webhookEndpoint.description).toBe('CRM sync, nightly');

    await page.getByRole('button', { name: 'Disable endpoint' }).click();
    await page.getByRole('button', { name: 'Enable endpoint' }).waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.webhookEndpoint.active).toBe(false);
    await page.getByRole('button', { name: 'Enable endpoint' }).click();
    await page.getByRole('button', { name: 'Disable endpoint' }).waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.webhookEndpoint.active).toBe(true);

    await page.getByLabel('Old secret keeps signing for (seconds)').fill('60');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByText('Secret rotated; the old one signs for 60 more seconds.').waitFor();
    const rotated = (await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.secret;
    expect(rotated).not.toBe(secret);
    await expect.poll(() => page.getByRole('textbox', { name: 'Signing secret' }).inputValue()).toBe(rotated);
  });

  it('shows each delivery attempt and filters them by status', async () => {
    const team = await server().team();
    const failing = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/fail'), events: ['constituent.created'] })).body.webhookEndpoint;
    await team.api.post('/constituents', { LastName: 'Okafor' });
    await receiver.waitFor((r) => r.path === '/fail', 3);
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints/${failing.id}`);
    await page.getByRole('tab', { name: 'Deliveries' }).click();
    await page.getByLabel('Delivery status').selectOption('failed');
    const rows = page.getByRole('table', { name: 'Delivery attempts' }).locator('tbody tr');
    // Every row shown is a failed attempt once the filter's answer has arrived.
    await expect.poll(async () => (await rows.allInnerTexts()).map((t) => /\tfailed\t/.test(t))).toEqual([true, true]);
    const first = await rows.first().innerText();
    expect(first).toContain('constituent.created');
    expect(first).toContain('failed');
    expect(first).toContain('500');
    expect(first).toMatch(/\d+ ms/);
    await page.getByLabel('Delivery status').selectOption('succeeded');
    await page.getByText('No deliveries with status succeeded.').waitFor();
  });

  it('shows an API refusal in words, naming the field', async () => {
    const team = await server().team();
    const { page, open, allowStatus } = browser();
    allowStatus(400);
    await open(`/teams/${team.id}/endpoints`);
    await page.getByLabel('Endpoint URL').fill('not a web address');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/field url.*400 invalid_field/);
  });
});

describe('activity, history and changes', () => {
  it('pages through the activity log', async () => {
    const team = await server().team();
    for (let i = 0; i < 27; i++) await team.api.post('/constituents', { LastName: `Row ${i}` });
    const { total } = (await team.admin.get('/activity')).body;
    expect(total).toBeGreaterThan(25);
    const { page, open } = browser();
    await open(`/teams/${team.id}/activity`);
    const rows = page.getByRole('table', { name: /Activity/ }).locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(25);
    expect(await rows.first().innerText()).toContain('Public API');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2').waitFor();
    await expect.poll(() => rows.count()).toBe(total - 25);
    await page.getByRole('table', { name: `Activity (${total} in all)` }).waitFor();
  });

  it("shows a record's history as a table of field changes", async () => {
    const team = await server().team();
    const c = (await team.api.post('/constituents', { LastName: 'Ito', Email1: 'ito@example.org' })).body.constituent;
    expect((await team.api.patch(`/constituents/${c.PkConstituent}`, { Email1: 'ken@example.org' })).status).toBe(200);
    const { page, open } = browser();
    await open(`/teams/${team.id}/history`);
    await page.getByLabel('Resource').selectOption('constituents');
    await page.getByLabel('Record id').fill(String(c.PkConstituent));
    await page.getByRole('button', { name: 'Show history' }).click();
    const second = page.getByRole('table', { name: /Revision 2/ });
    await second.waitFor();
    expect(await second.getByRole('row', { name: /Email1/ }).innerText()).toMatch(/Email1\s+ito@example.org\s+ken@example.org/);
    expect(await page.getByRole('table', { name: /Revision 1.*Public API/ }).innerText()).toContain('Ito');
  });

  it('tails the change feed, showing a new change within 5 seconds', async () => {
    const team = await server().team();
    const { page, open } = browser();
    await open(`/teams/${team.id}/changes`);
    // Only once `now` is a concrete cursor does the page say it follows: a change written after that is never missed.
    await page.getByText('Following the change feed').waitFor();
    const made = Date.now();
    await team.api.post('/constituents', { LastName: 'Tail' });
    await page.getByText('constituent.created').waitFor({ timeout: 5000 });
    expect(Date.now() - made).toBeLessThan(5000);
    expect(await page.getByRole('list', { name: 'Changes, newest first' }).innerText()).toContain('Tail');
  });
});

describe('the live tail, paused', () => {
  it('shows on resuming the changes written while it was paused', async () => {
    const team = await server().team();
    const { page, open } = browser();
    await open(`/teams/${team.id}/changes`);
    await page.getByText('Following the change feed').waitFor();
    await page.getByRole('button', { name: 'Pause live changes' }).click();
    await page.getByText('Paused.').waitFor();
    await team.api.post('/constituents', { LastName: 'WhilePaused' });
    await page.getByRole('button', { name: 'Resume live changes' }).click();
    await page.getByText('WhilePaused').waitFor({ timeout: 5000 });
  });
});

describe('accessibility', () => {
  it('gives every control of every view an accessible name', async () => {
    const team = await server().team();
    const ep = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/ok'), events: ['*'] })).body.webhookEndpoint;
    const { page, open } = browser();
    await open(`/teams/${team.id}/keys`, { signedIn: false });
    expect(await unnamedControls(page)).toEqual([]);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByLabel('Admin token').press('Enter');
    for (const view of ['keys', 'endpoints', 'activity', 'history', 'changes', `endpoints/${ep.id}`]) {
      await page.evaluate(`location.hash = ${JSON.stringify(`#/teams/${team.id}/${view}`)}`);
      await page.getByRole('main').getByRole('heading').first().waitFor();
      expect(await unnamedControls(page), view).toEqual([]);
    }
    await page.getByRole('tab', { name: 'Deliveries' }).click();
    await page.getByRole('table', { name: 'Delivery attempts' }).waitFor();
    expect(await unnamedControls(page), 'deliveries').toEqual([]);
  });

  it('works from the keyboard: sections are reached and opened with Tab and Enter', async () => {
    const team = await server().team();
    const { page, open } = browser();
    await open(`/teams/${team.id}/keys`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate('document.activeElement?.textContent')) === 'Webhook endpoints') break;
    }
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Webhook endpoints' }).waitFor();
    await page.getByLabel('Endpoint URL').focus();
    await page.keyboard.type(receiver.url('/ok'));
    await page.keyboard.press('Enter');
    await page.getByRole('textbox', { name: 'Signing secret' }).waitFor();
    expect((await team.admin.get('/webhook-endpoints')).body.webhookEndpoints).toHaveLength(1);
  });

  it('keeps focus where the user is: on a button after its action, on a new key, back on the form, on the section after a revoke', async () => {
    const team = await server().team();
    const { page, open } = browser();
    const focused = () => page.evaluate('document.activeElement?.getAttribute("aria-label") || document.activeElement?.textContent?.trim() || document.activeElement?.tagName');
    await open(`/teams/${team.id}/keys`);
    await page.getByLabel('Key name').fill('Sync');
    await page.getByRole('button', { name: 'Create key' }).focus();
    await page.keyboard.press('Enter');
    // The one-time key takes focus as it appears, so it is read out; putting it away returns to the form.
    await expect.poll(() => page.evaluate('document.activeElement?.closest("[aria-label=\'New API key\']") !== null')).toBe(true);
    await page.getByRole('button', { name: 'I have saved it' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.evaluate('document.activeElement === document.querySelector("input[maxlength]")')).toBe(true);
    // Revoking removes its button: focus goes to the section's heading, not the top of the page.
    await page.getByRole('button', { name: 'Revoke key Sync' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(focused).toBe('API keys');

    const ep = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/ok'), events: ['*'] })).body.webhookEndpoint;
    await open(`/teams/${team.id}/endpoints/${ep.id}`);
    await page.getByRole('button', { name: 'Send test event' }).focus();
    await page.keyboard.press('Enter');
    await page.getByText(/Test delivery succeeded/).waitFor();
    await expect.poll(focused).toBe('Send test event');
    // The endpoint's views are one tab stop; the arrows move between them.
    await page.getByRole('tab', { name: 'Settings' }).focus();
    await page.keyboard.press('ArrowRight');
    await page.getByRole('tab', { name: 'Deliveries', selected: true }).waitFor();
    expect(await focused()).toBe('Deliveries');
    await page.keyboard.press('ArrowLeft');
    await page.getByRole('tab', { name: 'Settings', selected: true }).waitFor();
    expect(await page.getByRole('tab', { name: 'Deliveries' }).getAttribute('tabindex')).toBe('-1');
  });
});

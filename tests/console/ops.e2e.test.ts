import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../dispatcher/support.js';
import { useConsole } from './support.js';

// The console's calls to what issue 16 adds (decisions.md §9 GET /teams and alertEmail, §12 test,
// resend, replay, stats, maxPerSecond; activity filters), in Chromium against the whole product.
const { server, browser } = useConsole();
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver();
  receiver.behave('/fail', () => ({ status: 500, body: 'down' }));
});
afterAll(() => receiver?.close());

describe('teams', () => {
  it('lists every team by name to pick from, and creates one', async () => {
    await server().team('Zeta chapter');
    await server().team('Alpha chapter');
    const { page, open } = browser();
    await open('');
    const links = page.getByRole('list').getByRole('link');
    await expect.poll(() => links.allInnerTexts()).toEqual(expect.arrayContaining(['Alpha chapter', 'Zeta chapter']));
    const names = await links.allInnerTexts();
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)));

    await page.getByLabel('Team name').fill('Harbor volunteers');
    await page.getByLabel('Alert email').fill('ops@example.org');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Team sections' }).innerText()).toContain('Harbor volunteers');
    const teams = (await server().admin.get('/teams')).body.teams;
    expect(teams).toContainEqual(expect.objectContaining({ name: 'Harbor volunteers', alertEmail: 'ops@example.org' }));

    await page.getByRole('link', { name: 'Teams', exact: true }).click();
    await page.getByRole('link', { name: 'Alpha chapter' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByRole('navigation', { name: 'Team sections' }).innerText()).toContain('Alpha chapter');
  });
});

describe('a team page opened directly', () => {
  it("names the team, though the picker was never shown (a bookmark, a reload)", async () => {
    const team = await server().team('Riverside canvassers');
    const { page, open } = browser();
    await open(`/teams/${team.id}/activity`);
    await expect.poll(() => page.getByRole('navigation', { name: 'Team sections' }).innerText()).toContain('Riverside canvassers');
  });
});

describe('webhook operations', () => {
  it('sends a test event and shows its outcome', async () => {
    const team = await server().team();
    const ep = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/ok'), events: ['*'] })).body.webhookEndpoint;
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints/${ep.id}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText(/Test delivery succeeded: HTTP 200/).waitFor();
    expect(receiver.on('/ok').some((r) => (r.json as { type?: string })?.type === 'webhook.ping')).toBe(true);
  });

  it('throttles an endpoint and lifts the limit', async () => {
    const team = await server().team();
    const ep = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/ok'), events: ['*'] })).body.webhookEndpoint;
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints/${ep.id}`);
    await page.getByLabel('Maximum requests per second').fill('5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('at most 5 requests per second').waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.webhookEndpoint.maxPerSecond).toBe(5);
    await page.getByLabel('Maximum requests per second').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('at most 5 requests per second').waitFor({ state: 'detached' });
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.webhookEndpoint.maxPerSecond).toBeNull();
  });

  it('refuses a throttle or an overlap that is not a whole number, in words, and changes nothing', async () => {
    const team = await server().team();
    const ep = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/ok'), events: ['*'], maxPerSecond: 5 })).body.webhookEndpoint;
    const before = (await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.secret;
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints/${ep.id}`);
    await page.getByLabel('Maximum requests per second').fill('ten');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('alert').getByText('Maximum requests per second must be a whole number from 1; got "ten".').waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.webhookEndpoint.maxPerSecond).toBe(5);
    await page.getByLabel('Old secret keeps signing for (seconds)').fill('one hour');
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('alert').getByText(/signing time \(seconds\) must be a whole number of 0 or more; got "one hour"\./).waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${ep.id}`)).body.secret).toBe(before);
  });

  it("starts another endpoint's page with that endpoint's settings, so saving never overwrites it with the last one's", async () => {
    const team = await server().team();
    const a = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/ok'), events: ['*'] })).body.webhookEndpoint;
    const b = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/fail'), events: ['constituent.created'] })).body.webhookEndpoint;
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints/${a.id}`);
    await expect.poll(() => page.getByLabel('Endpoint URL').inputValue()).toBe(receiver.url('/ok'));
    await page.evaluate(`location.hash = '#/teams/${team.id}/endpoints/${b.id}'`); // a bookmark, or back and forth
    await page.getByRole('heading', { name: `Endpoint ${receiver.url('/fail')}` }).waitFor();
    await expect.poll(() => page.getByLabel('Endpoint URL').inputValue()).toBe(receiver.url('/fail'));
    expect(await page.getByLabel('Event types').inputValue()).toBe('constituent.created');
    await page.getByLabel('Description').fill('B only');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await team.admin.get(`/webhook-endpoints/${b.id}`)).body.webhookEndpoint).toMatchObject({ url: receiver.url('/fail'), events: ['constituent.created'], description: 'B only' });
    expect((await team.admin.get(`/webhook-endpoints/${a.id}`)).body.webhookEndpoint).toMatchObject({ url: receiver.url('/ok'), events: ['*'], description: null });
  });

  it('resends a delivery, replays a range with its progress, and charts the last 24 hours', async () => {
    const team = await server().team();
    const ep = (await team.admin.post('/webhook-endpoints', { url: receiver.url('/fail'), events: ['constituent.created'] })).body.webhookEndpoint;
    const since = new Date(Date.now() - 60_000).toISOString();
    await team.api.post('/constituents', { LastName: 'Mbeki' });
    await team.api.post('/constituents', { LastName: 'Novak' });
    await receiver.waitFor((r) => r.path === '/fail', 2);
    const before = receiver.on('/fail').length;
    const { page, open } = browser();
    await open(`/teams/${team.id}/endpoints/${ep.id}`);
    await page.getByRole('tab', { name: 'Deliveries' }).click();
    const resend = page.getByRole('button', { name: /^Resend evt_/ }).first();
    await resend.click();
    await page.getByText(/a new attempt chain is queued/).waitFor();
    await receiver.waitFor(() => receiver.on('/fail').length > before);

    await page.getByLabel('Replay from').fill(since);
    await page.getByRole('button', { name: 'Start replay' }).click();
    await page.getByText(/Replay \S+: (done|failed), \d+ sent and \d+ failed of 2 queued\./).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('progressbar', { name: 'Replay progress' }).getAttribute('max')).toBe('2');

    await page.getByRole('tab', { name: 'Last 24 hours' }).click();
    const chart = page.getByRole('img', { name: /Delivery attempts per hour, last 24 hours: 0 succeeded, \d+ failed/ });
    await chart.waitFor();
    expect(await chart.locator('rect.bad').count()).toBe(24);
    expect(Number(/(\d+) failed/.exec((await chart.getAttribute('aria-label'))!)![1])).toBeGreaterThan(0);
  });
});

describe('activity filters', () => {
  it('filters the activity log by key name and by source', async () => {
    const team = await server().team();
    await team.api.post('/constituents', { LastName: 'By key' });
    const { page, open } = browser();
    await open(`/teams/${team.id}/activity`);
    const rows = page.getByRole('table', { name: /Activity/ }).locator('tbody tr');
    await page.getByLabel('Key name').fill('Integration');
    await page.getByRole('button', { name: 'Filter activity' }).click();
    await expect.poll(async () => (await rows.allInnerTexts()).every((t) => t.includes('Integration')) && (await rows.count()) > 0).toBe(true);
    await page.getByLabel('Key name').fill('');
    await page.getByLabel('Source').selectOption('Application');
    await page.getByRole('button', { name: 'Filter activity' }).click();
    await expect.poll(async () => (await rows.allInnerTexts()).every((t) => t.includes('Application')) && (await rows.count()) > 0).toBe(true);
  });
});

describe('unfinished erasures', () => {
  it('lists an erasure the server is still finishing, with its failed attempts and last error, and none once it is done', async () => {
    const team = await server().team();
    const id = (await team.api.post('/constituents', { FirstName: 'Mkconsolefirst', LastName: 'Mkconsolelast' })).body.constituent.PkConstituent as number;
    // In memory the change feed is a read model: its rewrite fails until put back.
    const feed = server().runtime.services.feedModel!;
    const rewrite = feed.rewrite;
    feed.rewrite = async () => Promise.reject(new Error('the feed store did not answer'));
    try {
      expect((await team.admin.post(`/constituents/${id}/erase`, {})).status).toBe(503);
      const { page, open } = browser();
      await open('');
      const table = page.getByRole('table', { name: 'Erasures being finished by the server' });
      await expect.poll(() => table.innerText()).toContain('the feed store did not answer');
      const text = await table.innerText();
      expect(text).toContain(String(id));
      expect(text).not.toContain('Mkconsole');
      feed.rewrite = rewrite;
      await expect.poll(async () => (await server().admin.get('/erasures')).body.erasures, { timeout: 15_000 }).toEqual([]);
      await page.getByRole('button', { name: 'Refresh erasures' }).click();
      await page.getByText('None: every erasure asked for is done.').waitFor();
    } finally {
      feed.rewrite = rewrite;
    }
  });
});

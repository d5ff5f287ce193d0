import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { http, useBuiltService } from '../support/process.js';

/**
 * `turnout replay` (decisions.md §13) against the replay call of §12. That call is built on its
 * own branch (issue 16): until it is merged here the server answers its path 404 "No such
 * resource", and this test skips itself; once it is there, it runs.
 */
const service = useBuiltService('turnout-cli-replay-');
const received: string[] = [];
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    received.push(JSON.parse(body).type);
    res.writeHead(200).end();
  });
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe('turnout replay', () => {
  it("sends an endpoint the team's past changes again, follows the replay to its end and prints it", async (ctx) => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const server = await service.start({ env: { TURNOUT_DATA_DIR: service.freshDir(), TURNOUT_WEBHOOK_ALLOW_INSECURE: '1' } });
    const main = service.built('cli/main.js');
    const env = { TURNOUT_URL: server.url, TURNOUT_ADMIN_TOKEN: 'test-admin-token' };
    const admin = http(`${server.url}/admin/v1`, 'test-admin-token');
    // The team through the admin API: 'turnout teams create' has its test in cli.test.ts.
    const team = (await admin.post('/teams', { name: 'Replayed' })).body.team.id as number;
    await admin.post(`/teams/${team}/constituents`, { LastName: 'Before' });
    await admin.post(`/teams/${team}/events`, { EventTitle: 'Before' });
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const endpoint = (await admin.post(`/teams/${team}/webhook-endpoints`, { url, events: ['*'] })).body.webhookEndpoint.id as number;
    const probe = await admin.get(`/teams/${team}/webhook-endpoints/${endpoint}/replays/1`);
    if (probe.status === 404 && /^No such resource/.test(probe.body?.error?.message)) ctx.skip();

    const r = await runCli(main, ['replay', '--team', String(team), '--endpoint', String(endpoint), '--from', '2000-01-01T00:00:00Z', '--types', 'constituent.*'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ replay: expect.objectContaining({ status: 'done', queued: 1 }) });
    expect(r.stderr).not.toMatch(/[\r\x1b]/);
    await expect.poll(() => received.filter((t) => t === 'constituent.created').length, { timeout: 20_000 }).toBe(1);
    expect(received).not.toContain('event.created');

    const bad = await runCli(main, ['replay', '--team', String(team), '--endpoint', '999999', '--from', '2000-01-01T00:00:00Z'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/HTTP 404 not_found/);
  }, 120_000);
});

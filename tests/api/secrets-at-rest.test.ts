import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Received, type Receiver, startReceiver, until } from '../dispatcher/support.js';
import { http, type TurnoutProcess, useBuiltService } from '../support/process.js';

/**
 * decisions.md §17, secrets at rest, on the built server and its data dir: no generation of any
 * endpoint's signing secret lies in any file Turnout keeps (the WAL included) but `main-key`,
 * while a non-secret marker written beside them is found by the same scan; a restart with the
 * same main key signs as before, one with another TURNOUT_MAIN_KEY says so and sends nothing.
 */
const service = useBuiltService('turnout-secrets-at-rest-');
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

const MARKER = `marker-${randomBytes(6).toString('hex')}`;

/** Every form a secret could be stored in: as answered, its base64 part, the key bytes it decodes to, and their hex. */
function formsOf(secret: string): Array<[string, Buffer]> {
  const b64 = secret.slice('whsec_'.length);
  const raw = Buffer.from(b64, 'base64');
  return [
    ['whole', Buffer.from(secret)],
    ['base64', Buffer.from(b64)],
    ['key bytes', raw],
    ['hex', Buffer.from(raw.toString('hex'))],
    ['base64url', Buffer.from(raw.toString('base64url'))],
  ];
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** `file: form of which secret` for every hit of any form of any secret, and the files holding `marker`. */
function scan(dir: string, secrets: string[], marker: string) {
  const hits: string[] = [];
  const markerIn: string[] = [];
  for (const file of filesUnder(dir)) {
    const bytes = readFileSync(file);
    const name = path.basename(file);
    if (bytes.includes(Buffer.from(marker))) markerIn.push(name);
    if (name === 'main-key') continue;
    secrets.forEach((secret, i) => {
      for (const [form, needle] of formsOf(secret)) if (bytes.includes(needle)) hits.push(`${name}: ${form} of secret ${i}`);
    });
  }
  return { hits, markerIn };
}

const verifies = (d: Received, secret: string) => {
  try {
    new Webhook(secret).verify(d.raw, d.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
};

describe('webhook signing secrets at rest', () => {
  it('leaves no generation of any secret in any file but main-key; the same main key signs after a restart, another one sends nothing and says why', async () => {
    const dir = service.freshDir();
    const env = { TURNOUT_DATA_DIR: dir, TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0', TURNOUT_WEBHOOK_ALLOW_INSECURE: '1', TURNOUT_WEBHOOK_RETRY_BASE_MS: '60000' };
    let server: TurnoutProcess = await service.start({ env });
    let admin = http(`${server.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Secrets' })).body.team.id as number;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Sync', scope: 'read_write' })).body.key as string;
    const endpoint = async (p: string) => {
      const r = await admin.post(`/teams/${team}/webhook-endpoints`, { url: rx.url(p), events: ['constituent.created'], description: MARKER });
      expect(r.status).toBe(201);
      return { id: r.body.webhookEndpoint.id as number, secret: r.body.secret as string };
    };
    const rotate = async (id: number, expiresInSeconds: number) => (await admin.post(`/teams/${team}/webhook-endpoints/${id}/rotate-secret`, { expiresInSeconds })).body.secret as string;
    const a = await endpoint('/a');
    const b = await endpoint('/b');
    // a: two generations live; b: its first retired at once.
    const a2 = await rotate(a.id, 3600);
    const b2 = await rotate(b.id, 0);
    const secrets = [a.secret, a2, b.secret, b2];
    expect(new Set(secrets).size).toBe(4);
    expect((await admin.get(`/teams/${team}/webhook-endpoints/${a.id}`)).body.secret).toBe(a2);

    const created = (FirstName: string, base = server.url) => http(`${base}/api/v1`, key).post('/constituents', { FirstName });
    await created('Before');
    const [atA] = await rx.waitFor((r) => r.path === '/a' && r.json?.data?.FirstName === 'Before');
    const [atB] = await rx.waitFor((r) => r.path === '/b' && r.json?.data?.FirstName === 'Before');
    expect([verifies(atA, a2), verifies(atA, a.secret), verifies(atB, b2), verifies(atB, b.secret)]).toEqual([true, true, true, false]);

    // While it runs (the WAL files in place), and once it has stopped.
    const running = scan(dir, secrets, MARKER);
    expect(running.hits).toEqual([]);
    expect(running.markerIn.length).toBeGreaterThan(0);
    await server.stop();
    const stopped = scan(dir, secrets, MARKER);
    expect(stopped.hits).toEqual([]);
    expect(stopped.markerIn.length).toBeGreaterThan(0);
    expect(statSync(path.join(dir, 'main-key')).mode & 0o777).toBe(0o600);

    // The same main key (the data dir's main-key file): signs as before.
    server = await service.start({ env });
    await created('Again');
    const [again] = await rx.waitFor((r) => r.path === '/a' && r.json?.data?.FirstName === 'Again');
    expect([verifies(again, a2), verifies(again, a.secret)]).toEqual([true, true]);
    await server.stop();

    // Another main key: the start says which endpoints it cannot sign for, and nothing goes out.
    // NODE_ENV production: the request log on, as an operator runs it.
    server = await service.start({ env: { ...env, NODE_ENV: 'production', TURNOUT_MAIN_KEY: randomBytes(32).toString('base64') } });
    expect(server.output()).toMatch(new RegExp(`MAIN KEY MISMATCH: .*webhook endpoint\\(s\\) ${a.id}, ${b.id}\\b.*TURNOUT_MAIN_KEY`));
    admin = http(`${server.url}/admin/v1`, 'test-admin-token');
    await created('Refused');
    const failed = await until(async () => (await admin.get(`/teams/${team}/webhook-endpoints/${a.id}/deliveries?status=failed`)).body.deliveries?.[0], 20_000);
    expect(failed.error).toMatch(/^not sent: webhook endpoint \d+'s signing secret was sealed under another main key/);
    expect(server.output()).toContain(`to endpoint ${a.id} not sent: webhook endpoint ${a.id}'s signing secret was sealed under another main key`);
    expect(rx.got.filter((r) => r.json?.data?.FirstName === 'Refused')).toEqual([]);
    // Its GET cannot show a secret it cannot open: an internal error, logged with the reason.
    expect((await admin.get(`/teams/${team}/webhook-endpoints/${a.id}`)).status).toBe(500);
    await until(() => server.output().split('\n').some((line) => line.includes('request failed') && line.includes(`endpoint ${a.id}'s signing secret was sealed under another main key`)));
    // A rotation needs no old secret: it is how an operator who lost the key recovers.
    const a3 = await rotate(a.id, 0);
    await created('Recovered');
    const [recovered] = await rx.waitFor((r) => r.path === '/a' && r.json?.data?.FirstName === 'Recovered');
    expect(verifies(recovered, a3)).toBe(true);
    await server.stop();
    expect(scan(dir, [...secrets, a3], MARKER).hits).toEqual([]);
  }, 120_000);
});

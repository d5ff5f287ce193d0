import Database from 'better-sqlite3';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/nats.js';
import { http, type TurnoutProcess, useBuiltService } from '../support/process.js';

/**
 * decisions.md §14: the server is killed (SIGKILL) inside a batch; restarted on the same data
 * dir, the retry with the same Idempotency-Key writes only the items that had not committed, and
 * answers every item as the single create would have (201).
 */
const service = useBuiltService('turnout-batch-crash-');

const seen = new Set<string>();
const receiver = createServer((req, res) => {
  seen.add(String(req.headers['webhook-id']));
  req.resume().on('end', () => res.writeHead(200).end());
});
beforeAll(() => new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve)));
afterAll(() => receiver.close());

/** A server on a fresh data dir with a team, its key and an endpoint for constituent.created on the receiver. */
async function setUp() {
  const dir = service.freshDir();
  const env = { TURNOUT_DATA_DIR: dir, TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0', TURNOUT_WEBHOOK_ALLOW_INSECURE: '1' };
  const server = await service.start({ env });
  const admin = http(`${server.url}/admin/v1`, 'test-admin-token');
  const team = (await admin.post('/teams', { name: 'Crash' })).body.team.id;
  const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Sync', scope: 'read_write' })).body.key as string;
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  expect((await admin.post(`/teams/${team}/webhook-endpoints`, { url, events: ['constituent.created'] })).status).toBe(201);
  return { dir, env, server, key };
}

function batchOf(n: number, tag: string) {
  return JSON.stringify({ items: Array.from({ length: n }, (_, i) => ({ FirstName: 'Crash', LastName: `${tag}${i}`, Email1: `${tag}${i}@example.org` })) });
}

const send = (base: string, key: string, query: string, body: string) =>
  fetch(`${base}/api/v1/constituents/batch${query}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'crash-1' }, body });
const total = async (base: string, key: string) => (await http(`${base}/api/v1`, key).get('/constituents?pageSize=1')).body.total as number;

/** Kills the server with SIGKILL as soon as `ready` says so, the batch's request still unanswered. */
async function killWhen(server: TurnoutProcess, answer: Promise<unknown>, ready: () => Promise<boolean> | boolean) {
  // Polled every millisecond: the window between the commit and the answer is short.
  const deadline = Date.now() + 60_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error('the batch never got under way');
    await new Promise((r) => setTimeout(r, 1));
  }
  server.process.kill('SIGKILL');
  expect(await answer).toBe('cut');
  await server.stop();
}

async function retried(base: string, key: string, query: string, body: string, n: number, tag: string) {
  const r = await send(base, key, query, body);
  expect(r.status).toBe(200);
  const results = ((await r.json()) as { results: Array<{ status: number; constituent: { PkConstituent: number; LastName: string } }> }).results;
  expect(results.map((x) => [x.status, x.constituent.LastName])).toEqual(Array.from({ length: n }, (_, i) => [201, `${tag}${i}`]));
  expect(new Set(results.map((x) => x.constituent.PkConstituent)).size).toBe(n);
}

describe('a batch cut short by a crash', () => {
  it('of 1,000 creates, killed once its records are in the log and before it answered: the retry writes none again, and each has one webhook', async () => {
    const ITEMS = 1000;
    const { dir, env, server, key } = await setUp();
    const body = batchOf(ITEMS, 'Test');
    const log = new Database(path.join(dir, 'turnout.sqlite'), { readonly: true, fileMustExist: true });
    const logged = () => (log.prepare("SELECT count(*) AS n FROM events WHERE stream LIKE 'constituent-%'").get() as { n: number }).n;
    // The items of a plain batch share group commits: watch the log itself, not the API's answer.
    await killWhen(server, send(server.url, key, '', body).catch(() => 'cut'), () => logged() > 0);
    const before = logged();
    log.close();
    expect(before).toBeGreaterThan(0);

    const second = await service.start({ env });
    expect(await total(second.url, key)).toBe(before);
    await retried(second.url, key, '', body, ITEMS, 'Test');
    expect(await total(second.url, key)).toBe(ITEMS);
    // Delivery is at least once (a crash may resend one): count the envelopes, not the requests.
    await waitUntil('a webhook for every record', async () => seen.size >= ITEMS, 120_000);
    expect(seen.size).toBe(ITEMS);
    const feed = await http(`${second.url}/api/v1`, key).get('/changes?limit=1000&types=constituent.created');
    expect([feed.body.changes.length, feed.body.hasMore]).toEqual([ITEMS, false]);
  }, 300_000);

  it('of upserts, killed among its items (each claims its email, then commits): the retry runs only the rest', async () => {
    const ITEMS = 300;
    const { env, server, key } = await setUp();
    const body = batchOf(ITEMS, 'Up');
    const query = '?mode=upsert&matchOn=email';
    await killWhen(server, send(server.url, key, query, body).catch(() => 'cut'), async () => (await total(server.url, key)) > 0);
    const second = await service.start({ env });
    const before = await total(second.url, key);
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(ITEMS);
    // Items committed before the kill answer 201 as created, not 200 as matched by their email.
    await retried(second.url, key, query, body, ITEMS, 'Up');
    expect(await total(second.url, key)).toBe(ITEMS);
  }, 300_000);
});

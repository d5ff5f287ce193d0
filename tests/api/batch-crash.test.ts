import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../support/nats.js';
import { http, useBuiltService } from '../support/process.js';

/**
 * decisions.md §14: the server is killed (SIGKILL) inside a batch of 1,000; restarted on the same
 * data dir, the retry with the same Idempotency-Key writes only the items that had not committed:
 * exactly 1,000 records, and one webhook each.
 */
const service = useBuiltService('turnout-batch-crash-');
const ITEMS = 1000;

describe('a batch cut short by a crash', () => {
  it('is finished by its retry with the same key: exactly 1,000 records and 1,000 webhooks', async () => {
    const seen = new Set<string>();
    const receiver = createServer((req, res) => {
      seen.add(String(req.headers['webhook-id']));
      req.resume().on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const dir = service.freshDir();
      const env = { TURNOUT_DATA_DIR: dir, TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0', TURNOUT_WEBHOOK_ALLOW_INSECURE: '1' };
      const first = await service.start({ env });
      const admin = http(`${first.url}/admin/v1`, 'test-admin-token');
      const team = (await admin.post('/teams', { name: 'Crash' })).body.team.id;
      const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Sync', scope: 'read_write' })).body.key;
      const endpoint = await admin.post(`/teams/${team}/webhook-endpoints`, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['constituent.created'] });
      expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);

      const body = JSON.stringify({ items: Array.from({ length: ITEMS }, (_, i) => ({ FirstName: 'Crash', LastName: `Test${i}`, Email1: `c${i}@example.org` })) });
      const send = (base: string) =>
        fetch(`${base}/api/v1/constituents/batch`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'crash-1' }, body });
      const total = async (base: string) => (await http(`${base}/api/v1`, key).get('/constituents?pageSize=1')).body.total as number;

      const cut = send(first.url).catch(() => 'cut');
      await waitUntil('the batch under way', async () => (await total(first.url)) > 0, 60_000);
      first.process.kill('SIGKILL');
      expect(await cut).toBe('cut');
      await first.stop();

      const second = await service.start({ env });
      const before = await total(second.url);
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(ITEMS);

      const retried = await send(second.url);
      expect(retried.status).toBe(200);
      const results = ((await retried.json()) as { results: unknown }).results as Array<{ status: number; constituent: { PkConstituent: number; LastName: string } }>;
      expect(results.map((r) => [r.status, r.constituent.LastName])).toEqual(Array.from({ length: ITEMS }, (_, i) => [201, `Test${i}`]));
      expect(new Set(results.map((r) => r.constituent.PkConstituent)).size).toBe(ITEMS);
      expect(await total(second.url)).toBe(ITEMS);
      // Delivery is at least once (a crash may resend one): count the envelopes, not the requests.
      await waitUntil('a webhook for every record', async () => seen.size >= ITEMS, 120_000);
      expect(seen.size).toBe(ITEMS);
      const feed = await http(`${second.url}/api/v1`, key).get('/changes?limit=1000&types=constituent.created');
      expect([feed.body.changes.length, feed.body.hasMore]).toEqual([ITEMS, false]);
    } finally {
      receiver.close();
    }
  }, 300_000);
});

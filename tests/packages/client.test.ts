import { beforeAll, describe, expect, it } from 'vitest';
import { Turnout, TurnoutError, verifyWebhook, WebhookVerificationError } from '../../packages/client/src/index.js';
import { type Receiver, useWebhookApp, type WebhookApp } from '../dispatcher/support.js';
import { startTestApp } from '../support/app.js';
import { cuttingProxy, listen, recordingFetch } from './client-support.js';

/**
 * @turnout/client (decisions §16) against a real Turnout: the whole product in this process,
 * dispatcher included, served over HTTP on a loopback port; back-off shrunk to milliseconds.
 */
let t: WebhookApp;
let rx: Receiver;
useWebhookApp((app, receiver) => {
  t = app;
  rx = receiver;
});
let base: string;
beforeAll(async () => {
  base = await listen(t.app);
});

const fast = { retryBaseMs: 5, retryMaxMs: 50 };

async function sdk(options: { fetch?: typeof fetch; baseUrl?: string; maxRetries?: number } = {}) {
  const team = await t.team();
  const apiKey = team.keys.Integration.key as string;
  return { team, apiKey, turnout: new Turnout({ baseUrl: base, apiKey, ...fast, ...options }) };
}

describe('the resources', () => {
  it('creates, reads, updates with If-Match, reads as of a revision and walks the history', async () => {
    const { turnout } = await sdk();
    const made = await turnout.constituents.create({ FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org' });
    expect(made.created).toBe(true);
    const id = made.constituent.PkConstituent;
    expect(made.lastResponse).toMatchObject({ status: 201, etag: '1', replayed: false, attempts: 1 });
    expect(made.lastResponse.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);

    const updated = await turnout.constituents.update(id, { MailingState: 'vermont' }, { ifMatch: made.lastResponse.etag });
    expect(updated.constituent.MailingState).toBe('VT');
    const stale = await turnout.constituents.update(id, { MailingCity: 'Burlington' }, { ifMatch: 1 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(TurnoutError);
    expect(stale).toMatchObject({ status: 412, code: 'precondition_failed' });

    const first = await turnout.constituents.get(id, { revision: 1 });
    expect(first).toMatchObject({ revision: 1, constituent: { MailingState: null } });
    expect((await turnout.constituents.get(id)).constituent.MailingState).toBe('VT');

    const history = [];
    for await (const entry of turnout.constituents.history(id)) history.push(entry);
    expect(history.map((h) => [h.revision, h.type])).toEqual([
      [1, 'constituent.created'],
      [2, 'constituent.updated'],
    ]);
    expect(await turnout.lookups.list()).toHaveProperty('districts');
    expect((await turnout.lookups.eventTimeZones()).eventTimeZones.length).toBeGreaterThan(0);
  });

  it('throws the API\u2019s error as a TurnoutError, with no retry on a 4xx', async () => {
    const rec = recordingFetch();
    const { turnout } = await sdk({ fetch: rec.fetch });
    const err = await turnout.constituents.create({ LastName: 'X', Email1: 'not an email' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TurnoutError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_field', field: 'Email1', retryAfter: undefined });
    expect((err as TurnoutError).message).toMatch(/Email1|email/);
    const missing = await turnout.events.get(999_999).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });
    expect(rec.sent.map((s) => s.status)).toEqual([400, 404]);
  });

  it('pages past several pages, in the API\u2019s order, one request a page', async () => {
    const rec = recordingFetch();
    const { turnout } = await sdk({ fetch: rec.fetch });
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push((await turnout.constituents.create({ LastName: `Pager ${i}` })).constituent.PkConstituent);
    rec.sent.length = 0;
    const seen = [];
    for await (const c of turnout.constituents.list({ search: 'Pager', pageSize: 2 })) seen.push(c.PkConstituent);
    expect(seen).toEqual(ids);
    expect(rec.sent.map((s) => new URL(s.url).searchParams.get('page'))).toEqual(['1', '2', '3', '4']);
    const page = await turnout.constituents.list.page({ search: 'Pager', pageSize: 2, page: 4 });
    expect(page).toMatchObject({ page: 4, pageSize: 2, total: 7 });
    expect(page.constituents.map((c) => c.PkConstituent)).toEqual(ids.slice(6));
    // Breaking out of the loop asks for no further page.
    rec.sent.length = 0;
    for await (const c of turnout.constituents.list({ search: 'Pager', pageSize: 2 })) if (c) break;
    expect(rec.sent).toHaveLength(1);
  });
});

describe('createBatch', () => {
  it('imports 2,500 items in batches of at most 1,000, results in input order', async () => {
    const rec = recordingFetch();
    const { turnout } = await sdk({ fetch: rec.fetch });
    const items = Array.from({ length: 2500 }, (_, i) => ({ LastName: `Batch ${i}`, Email1: i === 1234 ? 'broken' : `b${i}@example.org` }));
    const results = await turnout.constituents.createBatch(items);
    expect(results).toHaveLength(2500);
    expect(rec.sent.filter((s) => s.url.includes('/constituents/batch')).map((s) => s.status)).toEqual([200, 200, 200]);
    const ok = results.filter((r) => r.status === 201);
    expect(ok).toHaveLength(2499);
    expect(results[1234]).toMatchObject({ status: 400, error: { code: 'invalid_field', field: 'Email1' } });
    const lastNames = results.map((r) => ('constituent' in r ? r.constituent.LastName : null));
    expect(lastNames.filter((n, i) => n !== `Batch ${i}`)).toEqual([null]);
    expect((await turnout.constituents.list.page({ search: 'Batch ', pageSize: 1 })).total).toBe(2499);
  }, 120_000);

  it('runs again with the same key as a replay of each batch, writing nothing twice', async () => {
    const rec = recordingFetch();
    const { turnout } = await sdk({ fetch: rec.fetch });
    const items = Array.from({ length: 3 }, (_, i) => ({ LastName: `Again ${i}` }));
    const first = await turnout.constituents.createBatch(items, { idempotencyKey: 'import-again' });
    const second = await turnout.constituents.createBatch(items, { idempotencyKey: 'import-again' });
    expect(second).toEqual(first);
    expect(rec.sent.map((s) => s.key)).toEqual(['import-again.0', 'import-again.0']);
    expect((await turnout.constituents.list.page({ search: 'Again' })).total).toBe(3);
  });
});

describe('safe retries against a real server', () => {
  it('gets every write through a limit of 1 request a second, each exactly once', async () => {
    const limited = await startTestApp({ rateLimitPerSecond: 1, rateLimitPerMinute: 0 });
    try {
      const url = await listen(limited.app);
      const team = await limited.team();
      const rec = recordingFetch();
      const turnout = new Turnout({ baseUrl: url, apiKey: team.keys.Integration.key, maxRetries: 10, ...fast, fetch: rec.fetch });
      const made = await Promise.all([1, 2, 3].map((i) => turnout.constituents.create({ LastName: `Limited ${i}`, Email1: `limited${i}@example.org` })));
      expect(made.map((m) => m.created)).toEqual([true, true, true]);
      const names = [];
      for await (const c of turnout.constituents.list({ search: 'Limited' })) names.push(c.LastName);
      expect(names.sort()).toEqual(['Limited 1', 'Limited 2', 'Limited 3']);
      // The limit was met, and every retry of a write carried its first attempt's key.
      const posts = rec.sent.filter((s) => s.method === 'POST');
      expect(posts.some((s) => s.status === 429)).toBe(true);
      expect(new Set(posts.map((s) => s.key)).size).toBe(3);
      expect(posts.filter((s) => s.status === 201)).toHaveLength(3);
    } finally {
      await limited.close();
    }
  }, 60_000);

  it('retries a POST whose answer was lost after the server committed it, without a duplicate', async () => {
    const proxy = await cuttingProxy(base);
    try {
      const rec = recordingFetch();
      const { turnout } = await sdk({ baseUrl: proxy.url, fetch: rec.fetch });
      const made = await turnout.constituents.create({ LastName: 'Cut', Email1: 'cut@example.org' });
      expect(proxy.cut()).toBe(1);
      expect(made.lastResponse).toMatchObject({ status: 201, replayed: true, attempts: 2 });
      expect(rec.sent.map((s) => s.key)).toEqual([made.lastResponse.idempotencyKey, made.lastResponse.idempotencyKey]);
      const found = await turnout.constituents.list.page({ email: 'cut@example.org' });
      expect(found.total).toBe(1);
      expect(found.constituents[0].PkConstituent).toBe(made.constituent.PkConstituent);
    } finally {
      await proxy.close();
    }
  });
});

describe('the change feed', () => {
  it('stops at the head without follow, and with follow long-polls across a new write', async () => {
    let longPolls = 0;
    let write: Promise<number> | undefined;
    let turnout!: Turnout;
    const rec = recordingFetch((s) => {
      // Write only once the follower has reached the head and is waiting on the server.
      if (Number(new URL(s.url).searchParams.get('wait')) > 0 && s.url.includes('/changes') && longPolls++ === 0)
        write = turnout.constituents.create({ LastName: 'Late' }).then((m) => m.constituent.PkConstituent);
    });
    ({ turnout } = await sdk({ fetch: rec.fetch }));
    const first = (await turnout.constituents.create({ LastName: 'Early' })).constituent.PkConstituent;
    const head = turnout.changes.list({ types: ['constituent.*'] });
    const before = [];
    for await (const e of head) before.push(e);
    expect(before.map((e) => [e.type, 'PkConstituent' in e.data ? e.data.PkConstituent : null])).toEqual([['constituent.created', first]]);
    expect(head.cursor).toEqual(expect.any(String));

    const follow = turnout.changes.list({ after: head.cursor, follow: true, wait: 10 });
    let late: unknown;
    for await (const e of follow) {
      if (e.type === 'constituent.created') late = e.data.PkConstituent;
      break;
    }
    expect(longPolls).toBeGreaterThanOrEqual(1);
    expect(late).toBe(await write);
  });
});

describe('verifyWebhook', () => {
  it('returns a real delivery\u2019s envelope typed by its type, and refuses it tampered', async () => {
    const { turnout, team } = await sdk();
    const ep = await team.admin.post('/webhook-endpoints', { url: rx.url('/sdk'), events: ['constituent.created'] });
    expect(ep.status, ep.raw).toBe(201);
    const id = (await turnout.constituents.create({ FirstName: 'Grace', LastName: 'Hopper' })).constituent.PkConstituent;
    const [delivery] = await rx.waitFor((r) => r.path === '/sdk');
    const envelope = verifyWebhook(delivery.raw, delivery.headers, ep.body.secret);
    if (envelope.type !== 'constituent.created') throw new Error(`unexpected ${envelope.type}`);
    // Typed by the union: data is the constituent, its id a number.
    const pk: number = envelope.data.PkConstituent;
    expect(pk).toBe(id);

    const tampered = delivery.raw.replace('Hopper', 'Hoper');
    const refuse = (body: string | Uint8Array, headers: Record<string, unknown>) => {
      try {
        verifyWebhook(body, headers as Record<string, string>, ep.body.secret);
        return 'accepted';
      } catch (e) {
        return e instanceof WebhookVerificationError ? e.code : e;
      }
    };
    expect(refuse(tampered, delivery.headers)).toBe('no_matching_signature');
    // The Standard Webhooks headers alone verify the same way.
    const { 'x-turnout-signature': _, ...standard } = delivery.headers;
    expect(refuse(Buffer.from(delivery.raw), standard)).toBe('accepted');
    expect(refuse(tampered, standard)).toBe('no_matching_signature');
    expect(refuse(delivery.raw, {})).toBe('missing_header');
  });
});

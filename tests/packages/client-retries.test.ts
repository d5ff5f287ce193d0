import { describe, expect, it } from 'vitest';
import { Turnout, TurnoutError } from '../../packages/client/src/index.js';

/**
 * The SDK's retry rules (decisions §16) against a scripted fetch: which answers are retried, what
 * each retry carries and how long it waits. The tests against a real server are in client.test.ts.
 */
type Scripted = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

function scripted(...answers: Scripted[]) {
  const calls: Array<{ at: number; method: string; url: string; headers: Headers; body: string | undefined }> = [];
  const f: typeof fetch = async (input, init) => {
    calls.push({ at: Date.now(), method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers), body: init?.body as string | undefined });
    const a = answers.shift();
    if (!a) throw new Error('no more scripted answers');
    if (a instanceof Error) throw a;
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), { status: a.status, headers: { 'content-type': 'application/json', ...a.headers } });
  };
  return { calls, fetch: f };
}

const error = (code: string, field?: string) => ({ error: { code, message: `${code} message`, field } });
const created = { created: true, constituent: { PkConstituent: 7, LastName: 'X' } };
const client = (f: typeof fetch, more: object = {}) => new Turnout({ baseUrl: 'https://turnout.example.org/', apiKey: 'tko_test', retryBaseMs: 1, retryMaxMs: 4, fetch: f, ...more });

describe('retrying a write', () => {
  it('retries network errors, 5xx and 409 idempotency_key_in_progress with one Idempotency-Key, then succeeds', async () => {
    const s = scripted(new TypeError('fetch failed'), { status: 503, body: error('internal_error') }, { status: 409, body: error('idempotency_key_in_progress') }, { status: 201, body: created, headers: { etag: '"1"', 'idempotent-replayed': 'true' } });
    const made = await client(s.fetch).constituents.create({ LastName: 'X' });
    expect(made).toEqual(created);
    expect(made.lastResponse).toMatchObject({ attempts: 4, etag: '1', replayed: true });
    expect(s.calls.map((c) => c.url)).toEqual(Array(4).fill('https://turnout.example.org/api/v1/constituents'));
    const keys = s.calls.map((c) => c.headers.get('idempotency-key'));
    expect(new Set(keys)).toEqual(new Set([made.lastResponse.idempotencyKey]));
    expect(s.calls.every((c) => c.body === '{"LastName":"X"}' && c.headers.get('authorization') === 'Bearer tko_test')).toBe(true);
  });

  it('sends the key it is given, and a new random one for each call otherwise', async () => {
    const s = scripted({ status: 201, body: created }, { status: 201, body: created }, { status: 200, body: { constituent: created.constituent } }, { status: 200, body: { constituent: created.constituent } });
    const t = client(s.fetch);
    await t.constituents.create({ LastName: 'X' }, { idempotencyKey: 'import-row-17', upsert: true });
    await t.constituents.create({ LastName: 'X' });
    await t.constituents.update(7, { LastName: 'Y' }, { ifMatch: 3 });
    await t.constituents.update(7, { LastName: 'Y' }, { ifMatch: 'W/"4"' });
    expect(s.calls[0].headers.get('idempotency-key')).toBe('import-row-17');
    expect(s.calls[0].url).toBe('https://turnout.example.org/api/v1/constituents?mode=upsert&matchOn=email');
    expect(s.calls[1].headers.get('idempotency-key')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(s.calls[2].headers.get('idempotency-key')).not.toBe(s.calls[1].headers.get('idempotency-key'));
    expect(s.calls[2]).toMatchObject({ method: 'PATCH', url: 'https://turnout.example.org/api/v1/constituents/7' });
    expect(s.calls[2].headers.get('if-match')).toBe('"3"');
    expect(s.calls[3].headers.get('if-match')).toBe('W/"4"');
  });

  it('never retries another 4xx, 409 task_busy included', async () => {
    for (const [status, code] of [[400, 'invalid_field'], [404, 'not_found'], [409, 'task_busy'], [412, 'precondition_failed'], [422, 'idempotency_key_reused']] as const) {
      const s = scripted({ status, body: error(code, 'Email1') });
      const err = await client(s.fetch).constituents.create({ LastName: 'X' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TurnoutError);
      expect(err).toMatchObject({ status, code, message: `${code} message` });
      expect(s.calls).toHaveLength(1);
    }
  });

  it('gives up after maxRetries, throwing the last answer, or status 0 when none came', async () => {
    const s = scripted(...Array.from({ length: 3 }, () => ({ status: 502, body: error('internal_error') })));
    const err = await client(s.fetch, { maxRetries: 2 }).events.get(1).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 502, code: 'internal_error' });
    expect(s.calls).toHaveLength(3);

    const down = scripted(new TypeError('fetch failed'), new TypeError('fetch failed'));
    const lost = await client(down.fetch, { maxRetries: 1 }).events.get(1).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(TurnoutError);
    expect(lost).toMatchObject({ status: 0, code: 'connection_error' });
    expect((lost as TurnoutError).cause).toBeInstanceOf(TypeError);

    // An answer that is not the API's JSON (a proxy's page) still throws a TurnoutError.
    const html = scripted({ status: 418 });
    expect(await client(html.fetch).events.get(1).catch((e: unknown) => e)).toMatchObject({ status: 418, code: 'http_418' });
  });
});

describe('a batch import cut short', () => {
  const rows = Array.from({ length: 1500 }, (_, i) => ({ LastName: `Row ${i}` }));
  const ok = (n: number) => ({ status: 200, body: { results: Array.from({ length: n }, () => ({ status: 201, ...created })) } });

  it('can be run again without a duplicate, even with no key given: the error names the key, each batch keeps its own', async () => {
    // The first batch commits; the second fails with a 5xx on every attempt.
    const s = scripted(ok(1000), ...Array.from({ length: 4 }, () => ({ status: 503, body: error('internal_error') })));
    const err = (await client(s.fetch).constituents.createBatch(rows).catch((e: unknown) => e)) as TurnoutError;
    expect(err).toBeInstanceOf(TurnoutError);
    expect(err).toMatchObject({ status: 503, code: 'internal_error' });
    const key = err.idempotencyKey!;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(s.calls.map((c) => c.headers.get('idempotency-key'))).toEqual([`${key}.0`, ...Array(4).fill(`${key}.1`)]);

    // Run again with that key: the committed batch goes with its first key (the API replays its
    // kept answer instead of creating those 1,000 again), and the results come back in order.
    const again = scripted(ok(1000), ok(500));
    const results = await client(again.fetch).constituents.createBatch(rows, { idempotencyKey: key });
    expect(results).toHaveLength(1500);
    expect(again.calls.map((c) => c.headers.get('idempotency-key'))).toEqual([`${key}.0`, `${key}.1`]);
    expect(again.calls[0].body).toBe(s.calls[0].body);
    expect(again.calls[1].body).toBe(s.calls[1].body);
  });

  it('refuses, before sending, a key too long to name each batch within the API\u2019s 255 characters', async () => {
    const s = scripted(ok(1));
    const t = client(s.fetch);
    await expect(t.constituents.createBatch([{ LastName: 'X' }], { idempotencyKey: 'k'.repeat(254) })).rejects.toThrow(/at most 253 characters/);
    await expect(t.constituents.createBatch(rows, { idempotencyKey: 'k'.repeat(254) })).rejects.toThrow(/at most 253 characters/);
    expect(s.calls).toHaveLength(0);
    await t.constituents.createBatch([{ LastName: 'X' }], { idempotencyKey: 'k'.repeat(253) });
    expect(s.calls[0].headers.get('idempotency-key')).toBe(`${'k'.repeat(253)}.0`);
  });
});

describe('waiting on a 429', () => {
  it('waits what Retry-After says, else RateLimit-Reset, and reports retryAfter when it gives up', async () => {
    const s = scripted(
      { status: 429, body: error('rate_limited'), headers: { 'retry-after': '1' } },
      { status: 429, body: error('rate_limited'), headers: { 'ratelimit-reset': '1' } },
      { status: 201, body: created },
    );
    await client(s.fetch).constituents.create({ LastName: 'X' });
    const [a, b, c] = s.calls.map((x) => x.at);
    expect(b - a).toBeGreaterThanOrEqual(990);
    expect(c - b).toBeGreaterThanOrEqual(990);

    const never = scripted({ status: 429, body: error('rate_limited'), headers: { 'retry-after': '3600' } });
    const err = await client(never.fetch).constituents.create({ LastName: 'X' }).catch((e: unknown) => e);
    // Past maxRetryAfterSeconds (60) it does not hang for an hour: the caller gets the 429.
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 3600 });
    expect(never.calls).toHaveLength(1);
  });
});

describe('reading', () => {
  it('sends asOf and revision as the API spells them, and refuses an id that is not one before sending', async () => {
    const s = scripted({ status: 200, body: { event: {}, revision: 2 } });
    const t = client(s.fetch);
    await t.events.get(5, { asOf: new Date('2026-01-02T03:04:05Z') });
    expect(s.calls[0].url).toBe('https://turnout.example.org/api/v1/events/5?asOf=2026-01-02T03%3A04%3A05.000Z');
    await expect(t.events.get(Number('x'))).rejects.toThrow(/positive integer/);
    await expect(t.eventTickets.get(0)).rejects.toThrow(/positive integer/);
    expect(s.calls).toHaveLength(1);
  });

  it('joins change-feed types with commas and adds the long-poll to the time-out', async () => {
    const urls: string[] = [];
    // Answers after 50 ms unless aborted first: an attempt time-out of 5 ms alone would abort it.
    const slow: typeof fetch = (input, init) =>
      new Promise((resolve, reject) => {
        urls.push(String(input));
        const timer = setTimeout(() => resolve(new Response(JSON.stringify({ changes: [], next: 'c2', hasMore: false }))), 50);
        init?.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(init.signal!.reason);
        });
      });
    const t = client(slow, { timeoutMs: 5, maxRetries: 0 });
    const page = await t.changes.list.page({ after: 'c1', types: ['constituent.*', 'event.created'], wait: 1 });
    expect(page).toEqual({ changes: [], next: 'c2', hasMore: false });
    expect(urls).toEqual(['https://turnout.example.org/api/v1/changes?after=c1&wait=1&types=constituent.*%2Cevent.created']);
    expect(await t.changes.list.page({ after: 'c1' }).catch((e: unknown) => e)).toMatchObject({ status: 0, code: 'timeout' });
  });
});

describe('a caller\u2019s signal beside the time-out, on every Node 20', () => {
  it('aborts when either aborts, with its reason, where AbortSignal.any is missing (Node 20.0-20.2) as where it is there', async () => {
    const { eitherSignal } = await import('../../packages/client/src/http.js');
    const any = Object.getOwnPropertyDescriptor(AbortSignal, 'any');
    for (const without of [false, true]) {
      if (without) delete (AbortSignal as { any?: unknown }).any;
      try {
        const caller = new AbortController();
        const timeout = new AbortController();
        const both = eitherSignal(caller.signal, timeout.signal);
        expect(both.aborted).toBe(false);
        caller.abort(new Error('stopped by the caller'));
        expect([both.aborted, (both.reason as Error).message]).toEqual([true, 'stopped by the caller']);
        const late = new AbortController();
        const first = eitherSignal(late.signal, AbortSignal.abort(new Error('timed out')));
        expect([first.aborted, (first.reason as Error).message]).toEqual([true, 'timed out']);
      } finally {
        if (any) Object.defineProperty(AbortSignal, 'any', any);
      }
    }
    expect(typeof (AbortSignal as { any?: unknown }).any).toBe('function');
  });
});

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kept } from '../../api/idempotency.js';
import { client, startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const key = (k: string) => ({ headers: { 'idempotency-key': k } });

describe('Idempotency-Key on /api/v1 POST and PATCH (decisions.md §11)', () => {
  it('runs the first request, and answers a repeat with the stored status and body, replayed, writing nothing', async () => {
    const { api } = await t.team();
    const first = await api.Integration.post('/constituents', { LastName: 'Once' }, key('create-1'));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await api.Integration.post('/constituents', { LastName: 'Once' }, key('create-1'));
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.raw).toBe(first.raw);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('treats the same JSON value with another key order and spacing as the same body', async () => {
    const { api } = await t.team();
    const first = await api.Integration.post('/constituents', undefined, { raw: '{"LastName":"Ro","FirstName":"Al"}', ...key('k') });
    const again = await api.Integration.post('/constituents', undefined, { raw: '{ "FirstName" : "Al",\n "LastName": "Ro" }', ...key('k') });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });

  it('is 422 idempotency_key_reused for another body or another path (query included)', async () => {
    const { api } = await t.team();
    await api.Integration.post('/constituents', { LastName: 'A' }, key('k'));
    const body = await api.Integration.post('/constituents', { LastName: 'B' }, key('k'));
    expect(body.status).toBe(422);
    expect(body.body.error.code).toBe('idempotency_key_reused');
    const query = await api.Integration.post('/constituents?mode=upsert&matchOn=email', { LastName: 'A' }, key('k'));
    expect(query.status).toBe(422);
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('is 422 for another method on the same key', async () => {
    const { api } = await t.team();
    const c = (await api.Integration.post('/constituents', { LastName: 'A' })).body.constituent;
    await api.Integration.patch(`/constituents/${c.PkConstituent}`, { FirstName: 'X' }, key('m'));
    const post = await api.Integration.post(`/constituents/${c.PkConstituent}`, { FirstName: 'X' }, key('m'));
    expect(post.status).toBe(422);
  });

  it('stores 4xx answers too, and replays them', async () => {
    const { api } = await t.team();
    const bad = await api.Integration.post('/constituents', { LastName: 5 }, key('bad'));
    expect(bad.status).toBe(400);
    const again = await api.Integration.post('/constituents', { LastName: 5 }, key('bad'));
    expect(again.status).toBe(400);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.raw).toBe(bad.raw);
  });

  it('keeps the 400 of a body that is not JSON (refused before the route ran) under its key: the same text is replayed, another body is 422, nothing written', async () => {
    const { api, admin } = await t.team();
    for (const raw of ['{"LastName": ', '', '{"__proto__": {"x": 1}}']) {
      const k = key(`refused-${raw.length}`);
      const bad = await api.Integration.post('/constituents', undefined, { raw, ...k });
      expect([bad.status, bad.body.error.code], raw).toEqual([400, 'invalid_json']);
      expect(bad.headers['idempotent-replayed']).toBeUndefined();
      const again = await api.Integration.post('/constituents', undefined, { raw, ...k });
      expect([again.status, again.headers['idempotent-replayed'], again.raw]).toEqual([400, 'true', bad.raw]);
      const other = await api.Integration.post('/constituents', { LastName: 'Other' }, k);
      expect([other.status, other.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
      expect(other.headers['content-type']).toMatch(/^application\/json/);
    }
    // A key first used by a valid body: a refused body under it is 422 too.
    expect((await api.Integration.post('/constituents', { LastName: 'Kept' }, key('valid-first'))).status).toBe(201);
    const refused = await api.Integration.post('/constituents', undefined, { raw: '{"LastName": ', ...key('valid-first') });
    expect([refused.status, refused.body.error?.code]).toEqual([422, 'idempotency_key_reused']);
    // Without a key, nothing is kept: the same key-less body is refused afresh each time.
    expect((await api.Integration.post('/constituents', undefined, { raw: '{' })).headers['idempotent-replayed']).toBeUndefined();
    // And on the admin surface, scoped to the team.
    const adminBad = await admin.post('/constituents', undefined, { raw: '{"LastName": ', ...key('admin-refused') });
    expect(adminBad.status).toBe(400);
    expect((await admin.post('/constituents', { LastName: 'Admin' }, key('admin-refused'))).status).toBe(422);
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('scopes keys to the API key', async () => {
    const { api } = await t.team([['One', 'read_write'], ['Two', 'read_write']]);
    await api.One.post('/constituents', { LastName: 'A' }, key('shared'));
    const other = await api.Two.post('/constituents', { LastName: 'A' }, key('shared'));
    expect(other.status).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect((await api.One.get('/constituents')).body.total).toBe(2);
  });

  it.each([
    ['empty', ''],
    ['over 255 characters', 'x'.repeat(256)],
    ['not printable', 'a\tb'],
  ])('refuses a key that is %s with 400 invalid_field naming Idempotency-Key', async (_what, k) => {
    const { api } = await t.team();
    const r = await api.Integration.post('/constituents', { LastName: 'A' }, key(k));
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
    expect((await api.Integration.get('/constituents')).body.total).toBe(0);
  });

  it('accepts a key of 255 printable characters', async () => {
    const { api } = await t.team();
    expect((await api.Integration.post('/constituents', { LastName: 'A' }, key('~'.repeat(255)))).status).toBe(201);
  });

  it('is 409 idempotency_key_in_progress for a repeat while the first is still running', async () => {
    const { api } = await t.team();
    const store = t.runtime.services.idempotency;
    const complete = store.complete.bind(store);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const holding = new Promise<void>((r) => (reached = r));
    // The first request's answer is held at the store until the repeat has been answered.
    store.complete = async (...args) => {
      reached();
      await held;
      return complete(...args);
    };
    try {
      const first = api.Integration.post('/constituents', { LastName: 'Slow' }, key('busy'));
      await holding;
      const repeat = await api.Integration.post('/constituents', { LastName: 'Slow' }, key('busy'));
      expect(repeat.status).toBe(409);
      expect(repeat.body.error.code).toBe('idempotency_key_in_progress');
      release();
      expect((await first).status).toBe(201);
    } finally {
      store.complete = complete;
      release();
    }
    const after = await api.Integration.post('/constituents', { LastName: 'Slow' }, key('busy'));
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('lets exactly one of ten racing requests with one key write', async () => {
    const { api } = await t.team();
    const all = await Promise.all(Array.from({ length: 10 }, () => api.Integration.post('/constituents', { LastName: 'Race' }, key('race'))));
    for (const r of all) expect([201, 409]).toContain(r.status);
    expect(all.filter((r) => r.status === 201 && !r.headers['idempotent-replayed'])).toHaveLength(1);
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('ignores the header on GET', async () => {
    const { keys } = await t.team();
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/constituents', headers: { authorization: `Bearer ${keys.Integration.key}`, 'idempotency-key': '' } });
    expect(r.statusCode).toBe(200);
  });
});

describe('which answers are kept', () => {
  it('keeps 2xx and 4xx, but not 5xx, 429, 412 or 409 task_busy', () => {
    expect(kept(201, '{}')).toBe(true);
    expect(kept(400, '{"error":{"code":"invalid_field"}}')).toBe(true);
    expect(kept(409, '{"error":{"code":"not_open"}}')).toBe(true);
    expect(kept(409, '{"error":{"code":"task_busy"}}')).toBe(false);
    expect(kept(412, '{}')).toBe(false);
    expect(kept(429, '{}')).toBe(false);
    expect(kept(500, '{}')).toBe(false);
    expect(kept(503, '{}')).toBe(false);
  });
});

describe('keys across a restart', () => {
  it('replays from the data dir, in a private file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-idem-'));
    try {
      let app = await startTestApp({ dataDir: dir });
      const team = await app.team();
      const secret = team.keys.Integration.key as string;
      const first = await team.api.Integration.post('/constituents', { LastName: 'Kept' }, key('restart'));
      await app.close();
      expect(statSync(path.join(dir, 'idempotency.sqlite')).mode & 0o777).toBe(0o600);
      app = await startTestApp({ dataDir: dir });
      try {
        const api = client(app.app, '/api/v1', secret);
        const again = await api.post('/constituents', { LastName: 'Kept' }, key('restart'));
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.raw).toBe(first.raw);
        expect((await api.get('/constituents')).body.total).toBe(1);
      } finally {
        await app.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

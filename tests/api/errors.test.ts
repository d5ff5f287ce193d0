import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let api: Awaited<ReturnType<TestApp['team']>>['api']['Integration'];
beforeAll(async () => {
  t = await startTestApp();
  api = (await t.team()).api.Integration;
});
afterAll(() => t.close());

async function count() {
  return (await api.get('/constituents?pageSize=100')).body.total as number;
}

describe('bad input', () => {
  it('names an unknown body field and writes nothing', async () => {
    const before = await count();
    const r = await api.post('/constituents', { LastName: 'X', Favourite: 'tea' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: { code: 'unknown_field', message: expect.stringContaining('Favourite'), field: 'Favourite' } });
    expect(await count()).toBe(before);
  });

  it('refuses read-only fields as unknown', async () => {
    for (const field of ['PkConstituent', 'FkTeam', 'DateCreated', 'DateLastModified']) {
      const r = await api.post('/constituents', { LastName: 'X', [field]: 1 });
      expect(r.body.error, field).toMatchObject({ code: 'unknown_field', field });
    }
  });

  it('never coerces JSON values', async () => {
    for (const [field, value] of [['FkConstituentType', '2'], ['IsEmailOk', 'true'], ['FirstName', 5], ['IsEmailOk', 1]] as const) {
      const r = await api.post('/constituents', { LastName: 'X', [field]: value });
      expect(r.status, field).toBe(400);
      expect(r.body.error, field).toMatchObject({ code: 'invalid_field', field });
    }
  });

  it('answers invalid JSON, an empty body and a non-object body with invalid_json', async () => {
    for (const raw of ['{"LastName": "X",', '', '[1,2]', '"text"']) {
      const r = await api.post('/constituents', undefined, { raw });
      expect(r.status, raw).toBe(400);
      expect(r.body.error.code, raw).toBe('invalid_json');
    }
  });

  it('answers a body over 64 KB with payload_too_large', async () => {
    const r = await api.post('/constituents', { LastName: 'X', ConstituentDescription: 'x'.repeat(70_000) });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe('payload_too_large');
  });

  it('takes a body just under the limit', async () => {
    const r = await api.post('/constituents', { LastName: 'X', ConstituentDescription: 'x'.repeat(60_000) });
    expect(r.status).toBe(201);
  });

  it('refuses a body that is not JSON with 415 unsupported_media_type (decisions.md §4)', async () => {
    const r = await api.post('/constituents', undefined, { raw: 'LastName=X', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).toBe(415);
    expect(r.body.error.code).toBe('unsupported_media_type');
  });

  it('names a bad paging parameter', async () => {
    for (const q of ['page=0', 'pageSize=101', 'pageSize=0', 'page=abc', 'pageSize=2.5']) {
      const r = await api.get(`/constituents?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.error, q).toMatchObject({ code: 'invalid_field', field: q.split('=')[0] });
    }
  });

  it('names an unknown query parameter', async () => {
    const r = await api.get('/constituents?colour=red');
    expect(r.body.error).toMatchObject({ code: 'unknown_field', field: 'colour' });
  });

  it('answers a path id that is not a number with invalid_field and an unknown route with not_found', async () => {
    expect((await api.get('/constituents/abc')).body.error).toMatchObject({ code: 'invalid_field', field: 'id' });
    const r = await api.get('/nothing-here');
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not_found');
  });

  it('answers a missing record with not_found', async () => {
    const r = await api.get('/constituents/999999');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });
});

describe('service documents', () => {
  it('serves an OpenAPI document generated from the route schemas', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(r.statusCode).toBe(200);
    const doc = r.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/constituents', '/api/v1/constituents/{id}', '/api/v1/lookups']));
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin'))).toBe(false);
    expect(doc.paths['/api/v1/constituents'].post.requestBody.content['application/json'].schema.properties.Email1).toBeDefined();
  });

  it('answers /healthz and /readyz', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

describe('deeply nested bodies', () => {
  it('are refused as invalid_json, with an Idempotency-Key too (its fingerprint walks the body), and write nothing', async () => {
    const before = await count();
    const deep = (levels: number) => `{"LastName":"X","Theme":${'['.repeat(levels)}${']'.repeat(levels)}}`;
    for (const headers of [{}, { 'idempotency-key': 'deep-body' }] as Array<Record<string, string>>) {
      const r = await api.post('/constituents', undefined, { raw: deep(5000), headers });
      expect(r.status, JSON.stringify(headers)).toBe(400);
      expect(r.body.error).toEqual({ code: 'invalid_json', message: 'The body nests objects or arrays more than 64 levels deep; no body of this API needs more.' });
    }
    // 64 levels are read, and the field is then refused by name as any other unknown one.
    const r = await api.post('/constituents', undefined, { raw: deep(63), headers: { 'idempotency-key': 'deep-enough' } });
    expect(r.body.error).toMatchObject({ code: 'unknown_field', field: 'Theme' });
    expect(await count()).toBe(before);
  });
});

describe('prototype-poisoning keys', () => {
  it('are refused with a message that says why', async () => {
    const r = await api.post('/constituents', undefined, { raw: '{"LastName":"X","__proto__":{"admin":true}}' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_json', message: expect.stringContaining('__proto__') });
  });
});

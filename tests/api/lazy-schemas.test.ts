import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemasOfApp } from '../../api/app.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.ready();
});
afterAll(() => t.close());

/**
 * A start compiles no route's schema (api/lazy-schemas.ts: most of a start's CPU before the routes
 * serve, decisions.md §13); each is compiled at its first use, and the rest once the process is
 * ready, every one of them without an error.
 */
describe("the routes' schemas", () => {
  it('are not compiled by ready(): each validates and serializes as before from its first request', async () => {
    const schemas = schemasOfApp(t.app)!;
    const atReady = schemas.pending();
    // Every route's validators and serializers, well over one per route.
    expect(atReady).toBeGreaterThan(300);

    const team = await t.team();
    const refused = await team.api.Integration.post('/constituents', { LastName: 'Lee', Bogus: 1 });
    expect([refused.status, refused.body]).toEqual([400, { error: { code: 'unknown_field', message: expect.any(String), field: 'Bogus' } }]);
    // Not coerced: a JSON body's "5" is no integer; a query string's text is parsed as a plain decimal.
    expect((await team.api.Integration.get('/constituents?pageSize=0x10')).body.error).toMatchObject({ code: 'invalid_field', field: 'pageSize' });
    const created = await team.api.Integration.post('/constituents', { LastName: 'Lee', Email1: 'lee@example.org' });
    expect(created.status).toBe(201);
    // The serializer writes the schema's fields, and only those.
    expect(Object.keys(created.body)).toEqual(['created', 'constituent']);
    expect(schemas.pending()).toBeLessThan(atReady);
  });

  it('all compile, once the process is ready, between requests', async () => {
    const schemas = schemasOfApp(t.app)!;
    const before = schemas.pending();
    const all = schemas.compileAll();
    // One schema a turn: a request arriving meanwhile is answered before the rest are compiled.
    const health = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.statusCode).toBe(200);
    expect(schemas.pending()).toBeGreaterThan(0);
    const { compiled, failed } = await all;
    expect(failed).toEqual([]);
    expect(compiled).toBe(before);
    expect(schemas.pending()).toBe(0);
  });
});

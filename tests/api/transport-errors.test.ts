import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let key: string;
let api: Awaited<ReturnType<TestApp['team']>>['api']['Integration'];
let port: number;

beforeAll(async () => {
  t = await startTestApp();
  const team = await t.team();
  api = team.api.Integration;
  key = team.keys.Integration.key;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(() => t.close());

const head = (lines: string[]) => lines.join('\r\n') + '\r\n\r\n';
const get = (path: string, extra: string[] = []) => head([`GET ${path} HTTP/1.1`, 'Host: localhost', `Authorization: Bearer ${key}`, 'Connection: close', ...extra]);

function expectShape(body: any, code: string) {
  expect(body).toEqual({ error: { code, message: expect.any(String) } });
  expect(body.error.message.length).toBeGreaterThan(10);
}

describe("Fastify's and Node's own refusals, in the contract's shape (decisions.md §4)", () => {
  it('answers a bad percent-encoding in the path with 400 invalid_request', async () => {
    const r = await rawRequest(port, get('/api/v1/constituents/%ff'));
    expect(r.status).toBe(400);
    expectShape(r.body, 'invalid_request');
  });

  it('answers a path parameter over 100 characters with 414 uri_too_long', async () => {
    const r = await api.get(`/constituents/${'1'.repeat(101)}`);
    expect(r.status).toBe(414);
    expectShape(r.body, 'uri_too_long');
  });

  it('answers a URL longer than the parser takes with 414 uri_too_long', async () => {
    const r = await rawRequest(port, get(`/api/v1/constituents?q=${'a'.repeat(20_000)}`));
    expect(r.status).toBe(414);
    expectShape(r.body, 'uri_too_long');
  });

  it('answers malformed HTTP with 400 invalid_request', async () => {
    for (const bytes of ['GARBAGE\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n', 'POST /api/v1/constituents HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}']) {
      const r = await rawRequest(port, bytes);
      expect(r.status, bytes).toBe(400);
      expectShape(r.body, 'invalid_request');
    }
  });

  it('answers an HTTP/1.1 request without a Host header with 400 invalid_request, and writes nothing', async () => {
    const before = (await t.admin.get('/teams')).body.teams.length;
    const body = '{"name":"No host"}';
    const r = await rawRequest(port, head(['POST /admin/v1/teams HTTP/1.1', `Authorization: Bearer ${t.runtime.services.config.adminToken}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close']) + body);
    expect(r.status).toBe(400);
    expectShape(r.body, 'invalid_request');
    expect(r.body.error.message).toMatch(/no Host header/);
    expect((await t.admin.get('/teams')).body.teams.length).toBe(before);
    // HTTP/1.0 has no such rule.
    const old = await rawRequest(port, head(['GET /healthz HTTP/1.0']));
    expect(old.status).toBe(200);
  });

  it('answers headers over 16 KB with 431 headers_too_large', async () => {
    const r = await rawRequest(port, get('/api/v1/constituents', [`X-Big: ${'b'.repeat(20_000)}`]));
    expect(r.status).toBe(431);
    expectShape(r.body, 'headers_too_large');
  });

  it('answers an Expect header other than 100-continue with 417 expectation_failed, and serves 100-continue', async () => {
    const r = await rawRequest(port, get('/api/v1/constituents', ['Expect: the-moon']));
    expect(r.status).toBe(417);
    expectShape(r.body, 'expectation_failed');
    const body = JSON.stringify({ LastName: 'Continue' });
    const c = await rawRequest(
      port,
      head(['POST /api/v1/constituents HTTP/1.1', 'Host: localhost', `Authorization: Bearer ${key}`, 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Expect: 100-continue', 'Connection: close']) + body,
    );
    expect(c.text).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /);
  });

  it('answers a body over the limit with 413 payload_too_large (integration-api.md §7 wins over body_too_large)', async () => {
    const r = await api.post('/constituents', undefined, { raw: JSON.stringify({ LastName: 'X', Notes: 'n'.repeat(70_000) }) });
    expect(r.status).toBe(413);
    expect(r.body).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
  });

  it('answers a content type other than JSON with 415 unsupported_media_type', async () => {
    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      const r = await api.post('/constituents', undefined, { raw: '{"LastName":"X"}', headers: { 'content-type': type } });
      expect(r.status, type).toBe(415);
      expectShape(r.body, 'unsupported_media_type');
    }
  });
});

describe('naming the field', () => {
  it('names an empty field name as the empty string', async () => {
    const r = await api.post('/constituents', { LastName: 'X', '': 1 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'unknown_field', field: '' });
  });

  it('says where invalid JSON goes wrong: line, column and offset', async () => {
    const cases: Array<[string, string]> = [
      ['{"LastName": "X",\n  "FirstName": }', 'line 2, column 16 (character 33)'],
      ['{"LastName": tru}', "token '}' at line 1, column 17 (character 16)"],
      ['{"LastName": "X",', 'line 1, column 18 (character 17)'],
      ['{"LastName" "X"}', 'line 1, column 13 (character 12)'],
    ];
    for (const [raw, where] of cases) {
      const r = await api.post('/constituents', undefined, { raw });
      expect(r.status, raw).toBe(400);
      expect(r.body.error.code, raw).toBe('invalid_json');
      expect(r.body.error.message, raw).toContain(where);
    }
  });
});

describe('numbers in query strings are plain decimals', () => {
  it('refuses hex, exponents, Infinity and overflow in minAmount and maxAmount, naming the parameter', async () => {
    for (const name of ['minAmount', 'maxAmount'])
      for (const v of ['0x10', 'Infinity', '1e309', '1e3', '-Infinity', 'NaN', ' 5', '5 ', '1.2.3', '+5', '', '1'.repeat(400)]) {
        const r = await api.get(`/event-tickets?${name}=${encodeURIComponent(v)}`);
        expect(r.status, `${name}=${v}`).toBe(400);
        expect(r.body.error, `${name}=${v}`).toMatchObject({ code: 'invalid_field', field: name });
      }
  });

  it('accepts plain decimals', async () => {
    for (const v of ['0', '10', '10.5', '0.25', '.5', '7.'])
      expect((await api.get(`/event-tickets?minAmount=${v}`)).status, v).toBe(200);
  });
});

describe('unknown query parameters', () => {
  it('are refused on single reads, look-ups and lists alike, naming the parameter', async () => {
    const c = await api.post('/constituents', { LastName: 'Query' });
    const id = c.body.constituent.PkConstituent;
    for (const path of [`/constituents/${id}`, '/lookups', '/lookups/event-time-zones', '/event-tickets', '/volunteers', `/volunteer-task-groups/${id}`]) {
      const r = await api.get(`${path}?colour=red`);
      expect(r.status, path).toBe(400);
      expect(r.body.error, path).toMatchObject({ code: 'unknown_field', field: 'colour' });
    }
  });
});

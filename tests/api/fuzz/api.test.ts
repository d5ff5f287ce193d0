import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORT_STATUS } from '../../../api/transport.js';
import { ERROR_CODES } from '../../../api/errors.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { brokenJson, hostileText, hostileValue, objectOf, type Operation, operationsOf, valueOf } from './arbitraries.js';

/**
 * Property-based requests against every /api/v1 operation, generated from the schemas in the
 * served OpenAPI document (so a new route or field is fuzzed without touching this file), with
 * mutations: wrong types, huge and hostile strings, unknown and empty-named fields, bad
 * encodings, broken JSON, other content types. Every answer must be below 500, every error in
 * the contract's shape, and no 4xx may append to the log. FUZZ_RUNS raises the count locally.
 * 3,000 by default: over some 30 operations, about a hundred requests each (the test checks that
 * none gets fewer than PER_OPERATION), a fresh seed every run; more took most of a minute of the
 * whole suite's time on a loaded machine for little that a hundred did not already reach.
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);
const PER_OPERATION = Math.floor(RUNS / 100);
const CODES = new Set<string>([...ERROR_CODES, ...Object.keys(TRANSPORT_STATUS)]);

interface Request {
  method: Operation['method'];
  url: string;
  contentType: string | null;
  payload: string | undefined;
  /** The operation it was generated from: METHOD /path/{param}. */
  operation: string;
}

let t: TestApp;
let key: string;
let operations: Operation[];
let sent = 0;
const statuses = new Map<number, number>();
const perOperation = new Map<string, number>();

beforeAll(async () => {
  t = await startTestApp();
  const team = await t.team();
  key = team.keys.Integration.key;
  // A few records so that generated ids (small integers) often name something real.
  const api = team.api.Integration;
  const c = await api.post('/constituents', { FirstName: 'Fuzz', LastName: 'Seed', Email1: 'seed@example.org' });
  await api.post('/volunteers', { FkConstituent: c.body.constituent.PkConstituent });
  await api.post('/events', { EventTitle: 'Seed event', StartDate: '2030-01-01' });
  await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Seed task' });
  operations = operationsOf((await t.app.inject({ url: '/api/v1/openapi.json' })).json());
}, 60_000);

afterAll(async () => {
  console.log(`fuzz: ${sent} requests over ${operations.length} operations; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
  await t.close();
});

const asText = (v: unknown) => (typeof v === 'string' ? encodeURIComponent(v) : encodeURIComponent(typeof v === 'object' ? JSON.stringify(v) : String(v)));

function queryOf(op: Operation): fc.Arbitrary<string> {
  const known = op.query.map((p) =>
    fc.option(
      fc.oneof({ arbitrary: valueOf(p.name, p.schema).map(asText), weight: 4 }, { arbitrary: hostileText, weight: 1 }).map((v) => `${p.name}=${v}`),
      { freq: 2 },
    ),
  );
  const extra = fc.option(
    fc.oneof(
      fc.tuple(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`),
      fc.constantFrom('=1', '&&', '%ff=1', 'page=1&page=2', 'a[b]=1', '__proto__=1', 'constructor[prototype]=1', 'pageSize', '%=%'),
    ),
    { freq: 4 },
  );
  return fc.tuple(fc.tuple(...known), extra).map(([k, e]) => [...k, e].filter((x): x is string => x !== null).join('&'));
}

function bodyOf(op: Operation): fc.Arbitrary<{ contentType: string | null; payload: string | undefined }> {
  if (!op.body) return fc.constantFrom({ contentType: null, payload: undefined }, { contentType: 'application/json', payload: '{}' });
  const props = Object.keys(op.body.properties ?? {});
  // Mostly a few fields, as integrators send them, so that writes also succeed; sometimes all of them.
  const object = fc.oneof({ arbitrary: fc.subarray(props, { maxLength: Math.min(3, props.length) }).chain((few) => objectOf(op.body!, 0, few)), weight: 3 }, { arbitrary: objectOf(op.body), weight: 1 });
  const mutated = fc.oneof(
    { arbitrary: object, weight: 4 },
    { arbitrary: fc.tuple(object, fc.oneof(fc.constant(''), fc.string({ maxLength: 10 })), hostileValue).map(([o, k, v]) => ({ ...o, [k]: v })), weight: 2 },
    { arbitrary: fc.tuple(object, props.length ? fc.constantFrom(...props) : fc.constant('x'), hostileValue).map(([o, k, v]) => ({ ...o, [k]: v })), weight: 3 },
    { arbitrary: fc.tuple(object, fc.constantFrom(...(op.body.required ?? ['x']))).map(([o, k]) => ({ ...o, [k]: undefined })), weight: 1 },
  );
  const json = mutated.map((o) => JSON.stringify(o));
  const payload = fc.oneof({ arbitrary: json, weight: 8 }, { arbitrary: brokenJson, weight: 2 });
  const contentType = fc.oneof(
    { arbitrary: fc.constant('application/json'), weight: 12 },
    { arbitrary: fc.constantFrom('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'APPLICATION/JSON', 'application/jsonx', ''), weight: 1 },
  );
  return fc.tuple(contentType, payload).map(([ct, p]) => ({ contentType: ct || null, payload: p }));
}

function requestOf(op: Operation): fc.Arbitrary<Request> {
  const segment = fc.oneof({ arbitrary: fc.integer({ min: 1, max: 8 }).map(String), weight: 4 }, { arbitrary: hostileText, weight: 1 });
  const path = fc.tuple(...op.pathParams.map(() => segment)).map((values) => op.pathParams.reduce((p, name, i) => p.replace(`{${name}}`, values[i] || '%20'), op.path));
  return fc.tuple(path, queryOf(op), bodyOf(op)).map(([p, q, b]) => ({ method: op.method, url: q ? `${p}?${q}` : p, operation: `${op.method} ${op.path}`, ...b }));
}

async function head(): Promise<string> {
  return JSON.stringify(await t.runtime.services.log.head(), (_k, v) => (typeof v === "bigint" ? v.toString() : v));
}

describe('the public API under generated and mutated requests', () => {
  it(`never answers 5xx, answers every error in the contract's shape, and writes nothing on a 4xx (${RUNS} requests)`, async () => {
    const request = fc.oneof(...operations.map(requestOf));
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const before = await head();
        const headers: Record<string, string> = { authorization: `Bearer ${key}` };
        if (r.contentType) headers['content-type'] = r.contentType;
        const res = await t.app.inject({ method: r.method, url: r.url, headers, payload: r.payload });
        sent++;
        perOperation.set(r.operation, (perOperation.get(r.operation) ?? 0) + 1);
        statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        const what = `${r.method} ${r.url.slice(0, 300)} ${r.contentType} ${String(r.payload).slice(0, 300)} -> ${res.statusCode} ${res.body.slice(0, 300)}`;
        expect(res.statusCode, what).toBeLessThan(500);
        if (res.statusCode < 400) return;
        const body = JSON.parse(res.body);
        expect(Object.keys(body), what).toEqual(['error']);
        expect(Object.keys(body.error).every((k) => ['code', 'message', 'field'].includes(k)), what).toBe(true);
        expect(CODES.has(body.error.code), what).toBe(true);
        expect(typeof body.error.message === 'string' && body.error.message.length > 0, what).toBe(true);
        if ('field' in body.error) expect(typeof body.error.field, what).toBe('string');
        if (['unknown_field', 'missing_field', 'invalid_field'].includes(body.error.code) && !/^(The body|The request)/.test(body.error.message))
          expect('field' in body.error, what).toBe(true);
        expect(await head(), `a ${res.statusCode} appended to the log: ${what}`).toBe(before);
      }),
      { numRuns: RUNS, seed: process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined },
    );
    expect(sent).toBeGreaterThanOrEqual(RUNS);
    // Every operation was fuzzed, and with more than a handful of requests.
    const thin = operations.map((op) => `${op.method} ${op.path}`).filter((name) => (perOperation.get(name) ?? 0) < PER_OPERATION);
    expect(thin, `operations sent fewer than ${PER_OPERATION} requests`).toEqual([]);
  }, 120_000);
});

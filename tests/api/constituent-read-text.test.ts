import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp, type App } from '../../api/app.js';
import type { ReadStore } from '../../projections/store/port.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * GET /constituents/:id sends the record's JSON text as the SQLite store writes it from the row
 * (ReadStore.getJson), unserialised. The oracle is the same route on the same data through a store
 * without that read: the stored document parsed and written by the response schema's serialiser,
 * as every single read was answered before. The two must agree byte for byte, headers included.
 */
let t: TestApp;
let oracle: App;
let team: Awaited<ReturnType<TestApp['team']>>;
let token: string;

beforeAll(async () => {
  t = await startTestApp();
  const store = t.runtime.services.store;
  // The same store with no getJson: the route falls back to the parse and the serialiser.
  const plain = Object.create(store, { getJson: { value: undefined } }) as ReadStore;
  oracle = await buildApp({ ...t.runtime.services, store: plain });
  team = await t.team();
  token = team.keys.Integration.key as string;
});
afterAll(async () => {
  await oracle?.close();
  await t?.close();
});

async function both(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const request = { method, url, headers: { authorization: `Bearer ${token}`, ...headers } };
  const [fast, slow] = [await t.app.inject(request), await oracle.inject(request)];
  return { fast, slow };
}

const headersOf = (r: { headers: Record<string, unknown> }) => {
  const { date: _date, ...rest } = r.headers;
  return rest;
};

/** Every optional field absent, null or set; strings through each of the serialiser's escaping paths. */
const BODIES: Array<Record<string, unknown>> = [
  { LastName: 'Min' },
  { FirstName: 'Ada', LastName: 'Lovelace', MiddleInitial: 'K', Nickname: 'Countess', Salutation: 'Dear Ada' },
  {
    FirstName: 'Zoë',
    LastName: 'Ñúñez 日本語 🎉',
    Email1: 'zoe@example.org',
    Email2: 'Zoe.Two@Example.ORG',
    Phone1: '(555) 123-4567',
    Phone2: '1-555-765-4321',
    Phone3: '5550001111',
    Website1: 'https://example.org/?q="quoted"&x=\\back\\slash',
    MailingAddressLine1: 'Line "one"\nwith a newline\tand a tab',
    MailingAddressLine2: 'control \u0001\u001f and \u2028 separators',
    MailingCity: 'São Paulo',
    MailingState: 'new york',
    MailingZipCode: '10001',
    DateOfBirth: '1990-02-28',
    IsEmailOk: false,
    IsPhoneOk: true,
    IsTextOk: null,
    IsSolicitOk: false,
    IsActiveConstituent: false,
    ConstituentDescription: `${'long text with "quotes" and \\ backslashes, '.repeat(40)}end`,
  },
  { FkConstituentType: 2, ConstituentName: 'The "Household" \\ of 7', Email1: null, DateOfBirth: null },
  { FkConstituentType: 3, ConstituentName: 'Org', ConstituentDescription: 'a'.repeat(41), Nickname: 'b'.repeat(42), Salutation: 'short"' },
  { FirstName: '\ud83d\ude00 emoji', LastName: 'Lone \ud800 surrogate' },
  { FirstName: '', LastName: 'Empty first' },
];

describe('a single constituent read answered as its stored text', () => {
  it('sends the bytes and headers the response serialiser writes from the parsed document, for varied records', async () => {
    const spy = vi.spyOn(t.runtime.services.store as Required<Pick<ReadStore, 'getJson'>>, 'getJson');
    const ids: number[] = [];
    for (const body of BODIES) {
      const created = await team.api.Integration.post('/constituents', body);
      expect(created.status, JSON.stringify(body)).toBe(201);
      ids.push(created.body.constituent.PkConstituent as number);
    }
    // Updated records too: fields cleared to null, set, changed.
    expect((await team.api.Integration.patch(`/constituents/${ids[1]}`, { Nickname: null, Email1: 'ada@example.org', IsTextOk: true })).status).toBe(200);
    expect((await team.api.Integration.patch(`/constituents/${ids[2]}`, { MailingAddressLine2: null, IsEmailOk: null, FirstName: 'Zoé' })).status).toBe(200);
    spy.mockClear();
    for (const id of ids) {
      const { fast, slow } = await both(`/api/v1/constituents/${id}`);
      expect(fast.statusCode).toBe(200);
      expect(fast.body).toBe(slow.body);
      expect(headersOf(fast)).toEqual(headersOf(slow));
      expect(JSON.parse(fast.body).constituent.PkConstituent).toBe(id);
      const head = await both(`/api/v1/constituents/${id}`, {}, 'HEAD');
      expect(head.fast.body).toBe('');
      expect(headersOf(head.fast)).toEqual(headersOf(head.slow));
    }
    // Each read (GET and HEAD) took the text path: the comparison is not of the fallback with itself.
    expect(spy).toHaveBeenCalledTimes(2 * ids.length);
    spy.mockRestore();
  });

  it('answers 304 to a matching If-None-Match and 400 to a malformed one, as before', async () => {
    const id = (await team.api.Integration.post('/constituents', { LastName: 'Tagged' })).body.constituent.PkConstituent as number;
    await team.api.Integration.patch(`/constituents/${id}`, { FirstName: 'Two' });
    for (const tag of ['"2"', 'W/"2"', '"1", "2"', '*', '"1"', 'bad']) {
      const { fast, slow } = await both(`/api/v1/constituents/${id}`, { 'if-none-match': tag });
      expect(fast.statusCode, tag).toBe(slow.statusCode);
      expect(fast.body, tag).toBe(slow.body);
      expect(fast.headers.etag, tag).toBe(slow.headers.etag);
    }
    expect((await both(`/api/v1/constituents/${id}`, { 'if-none-match': '"2"' })).fast.statusCode).toBe(304);
  });

  it('is 404 alike for a missing, deleted, erased or other team\u2019s record', async () => {
    const other = await t.team();
    const theirs = (await other.api.Integration.post('/constituents', { LastName: 'Theirs' })).body.constituent.PkConstituent as number;
    const deleted = (await team.api.Integration.post('/constituents', { LastName: 'Deleted' })).body.constituent.PkConstituent as number;
    expect((await team.admin.del(`/constituents/${deleted}`)).status).toBe(200);
    const erased = (await team.api.Integration.post('/constituents', { LastName: 'Erased', Email1: 'gone@example.org' })).body.constituent.PkConstituent as number;
    expect((await team.admin.post(`/constituents/${erased}/erase`, {})).status).toBe(200);
    for (const id of [999_999, theirs, deleted, erased]) {
      const { fast, slow } = await both(`/api/v1/constituents/${id}`);
      expect(fast.statusCode, String(id)).toBe(404);
      expect(fast.body).toBe(slow.body);
      expect(JSON.parse(fast.body).error.code).toBe('not_found');
    }
  });

  it('still reads a record as it stood with ?revision=, and refuses an unknown parameter', async () => {
    const id = (await team.api.Integration.post('/constituents', { LastName: 'Was' })).body.constituent.PkConstituent as number;
    await team.api.Integration.patch(`/constituents/${id}`, { LastName: 'Is' });
    const then = await team.api.Integration.get(`/constituents/${id}?revision=1`);
    expect(then.status).toBe(200);
    expect(then.body.constituent.LastName).toBe('Was');
    expect(then.body.revision).toBe(1);
    const unknown = await team.api.Integration.get(`/constituents/${id}?fields=LastName`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('unknown_field');
  });
});

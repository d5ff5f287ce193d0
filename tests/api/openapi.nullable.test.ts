import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, startTestApp, type TestApp } from '../support/app.js';

/**
 * The OpenAPI document and the server agree on null: every body field the document marks
 * nullable is accepted as null by its route, and every field it does not mark nullable is
 * refused as null (400 invalid_field naming it). Driven by the served document itself, so a new
 * route or field is covered without touching this test.
 */
type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[] };
type Operation = { requestBody?: { content?: Record<string, { schema?: Schema }> } };

let t: TestApp;
let api: Client;
let doc: { paths: Record<string, Record<string, Operation>> };
/** A record of each resource, for path ids and references. */
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await startTestApp();
  const team = await t.team();
  api = team.api.Integration;
  doc = (await api.get('/openapi.json')).body;
  ids.constituents = (await api.post('/constituents', { FirstName: 'Ada', LastName: 'Base' })).body.constituent.PkConstituent;
  const other = (await api.post('/constituents', { FirstName: 'Vol', LastName: 'Base' })).body.constituent.PkConstituent;
  ids.volunteers = (await api.post('/volunteers', { FkConstituent: other })).body.volunteer.PkVolunteer;
  ids['volunteer-tasks'] = (await api.post('/volunteer-tasks', { VolunteerTaskTitle: 'Base' })).body.volunteerTask.PkTask;
  ids.events = (await api.post('/events', { EventTitle: 'Base' })).body.event.PkEvent;
  for (const [k, v] of Object.entries(ids)) if (!Number.isInteger(v)) throw new Error(`fixture ${k}: ${v}`);
});
afterAll(() => t?.close());

/** Fields every body of a resource carries (but the one under test), for its cross-field rules. */
const BASES: Record<string, Record<string, unknown>> = { constituents: { FirstName: 'Ada', LastName: 'Base' } };
const REFS: Record<string, string> = { FkConstituent: 'constituents', FkVolunteer: 'volunteers', FkEvent: 'events' };

/** A valid-looking value for a required field that is not under test. */
function filler(name: string, schema: Schema): unknown {
  if (REFS[name]) return ids[REFS[name]];
  const type = [schema.type].flat().find((x) => x !== 'null');
  return type === 'integer' || type === 'number' ? 1 : type === 'boolean' ? true : `${name} value`;
}

/** Every (route, field) of the document's JSON bodies, with whether the document allows null. */
function bodyFields() {
  const out: Array<{ method: string; url: string; field: string; nullable: boolean; base: Record<string, unknown> }> = [];
  for (const [p, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops)) {
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (!schema?.properties) continue;
      const resource = p.split('/')[3];
      const url = p.replace('/api/v1', '').replace('{id}', String(ids[resource]));
      for (const [field, s] of Object.entries(schema.properties)) {
        const required = Object.fromEntries((schema.required ?? []).map((r) => [r, filler(r, schema.properties![r])]));
        // A batch's body is {items}: the resource's own fields belong to its items.
        const { [field]: _, ...base } = { ...(p.endsWith('/batch') ? {} : BASES[resource]), ...required };
        out.push({ method, url, field, nullable: [s.type].flat().includes('null'), base });
      }
    }
  return out;
}

describe('the OpenAPI document on null', () => {
  it('covers the write routes', () => {
    const fields = bodyFields();
    expect(new Set(fields.map((f) => `${f.method} ${f.url.replace(/\d+/, ':id')}`)).size).toBeGreaterThanOrEqual(8);
    expect(fields.filter((f) => !f.nullable).map((f) => f.field)).toEqual(
      expect.arrayContaining(['FkConstituentType', 'IsActiveConstituent', 'IsActive', 'IsSuspended', 'VolunteerTaskTitle', 'EventTitle', 'FkConstituent']),
    );
  });

  it('is accepted as null by the server for every field it marks nullable', async () => {
    const refused: string[] = [];
    for (const f of bodyFields().filter((x) => x.nullable)) {
      const r = await (f.method === 'post' ? api.post(f.url, { ...f.base, [f.field]: null }) : api.patch(f.url, { ...f.base, [f.field]: null }));
      if (r.status === 400 && r.body.error.field === f.field) refused.push(`${f.method} ${f.url} ${f.field}: ${r.body.error.message}`);
      expect(r.status, `${f.method} ${f.url} ${f.field}`).toBeLessThan(500);
    }
    expect(refused).toEqual([]);
  });

  it('is refused as null, naming the field, for every field it does not mark nullable', async () => {
    const accepted: string[] = [];
    for (const f of bodyFields().filter((x) => !x.nullable)) {
      const r = await (f.method === 'post' ? api.post(f.url, { ...f.base, [f.field]: null }) : api.patch(f.url, { ...f.base, [f.field]: null }));
      if (!(r.status === 400 && r.body.error.code === 'invalid_field' && r.body.error.field === f.field)) accepted.push(`${f.method} ${f.url} ${f.field}: ${r.status} ${r.raw.slice(0, 120)}`);
    }
    expect(accepted).toEqual([]);
  });
});

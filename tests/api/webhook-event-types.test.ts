import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_TYPES } from '../../domain/webhook-endpoint/types.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

describe('GET /api/v1/webhook-event-types (decisions.md 12)', () => {
  it('lists every catalog type and webhook.ping, each with a description and the JSON Schema of its data, to a read-only key', async () => {
    const team = await t.team([['Reader', 'read_only']]);
    const r = await team.api.Reader.get('/webhook-event-types');
    expect(r.status, r.raw).toBe(200);
    expect(r.body.eventTypes.map((e: { name: string }) => e.name)).toEqual([...WEBHOOK_TYPES, 'webhook.ping']);
    for (const e of r.body.eventTypes) {
      expect(e.description, e.name).toMatch(/\.$/);
      expect(e.schema, e.name).toMatchObject({ type: 'object', additionalProperties: false });
      expect(e.schema.required, e.name).toEqual(Object.keys(e.schema.properties));
    }
    const byName = Object.fromEntries(r.body.eventTypes.map((e: { name: string; schema: any }) => [e.name, e.schema]));
    // The stamps of spec 6.3: updates add DateLastModified, deletes DeletedUtc.
    expect(Object.keys(byName['constituent.created'].properties)).not.toContain('DateLastModified');
    expect(Object.keys(byName['constituent.updated'].properties)).toContain('DateLastModified');
    expect(Object.keys(byName['constituent.deleted'].properties)).toEqual(expect.arrayContaining(['DeletedUtc', 'DateCreated']));
    expect(Object.keys(byName['volunteer_task.canceled'].properties)).toEqual(['constituent', 'task', 'taskGroup', 'EventUtc']);
    expect(byName['donation.refunded'].properties).toMatchObject({ RefundAmount: expect.any(Object), FkRefundedDonation: expect.any(Object) });
    expect(byName['webhook.ping']).toMatchObject({ properties: { endpointId: { type: 'integer' } }, required: ['endpointId'] });
  });

  it('takes an API key like every /api/v1 call', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/api/v1/webhook-event-types' });
    expect(r.statusCode).toBe(401);
  });

  it('matches the OpenAPI document, which lists every type under webhooks with its envelope', async () => {
    const team = await t.team();
    const served = (await team.api.Integration.get('/webhook-event-types')).body.eventTypes;
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(Object.keys(doc.webhooks)).toEqual(served.map((e: { name: string }) => e.name));
    for (const e of served) {
      const envelope = doc.webhooks[e.name].post.requestBody.content['application/json'].schema;
      expect(envelope.properties.type, e.name).toEqual({ const: e.name, type: 'string' });
      expect(envelope.properties.data, e.name).toEqual(e.schema);
      expect(envelope.required, e.name).toEqual(expect.arrayContaining(['id', 'type', 'created', 'team', 'data']));
    }
  });
});

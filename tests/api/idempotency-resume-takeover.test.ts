import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { NotYetReadable } from '../../projections/engine/status.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * decisions.md §11: the retry that takes over a keyed write whose earlier try may have written
 * (a 5xx, or 503 write_pending) answers from what that try wrote, whatever happened in between.
 * Failures are injected through the runtime's settle, after the read models really settled.
 */
let t: TestApp;
let failing: 'time-out' | 'error' | null = null;
beforeAll(async () => {
  t = await startTestApp();
  const services = t.runtime.services;
  const real = services.settle;
  services.settle = async (position: Position | null, ctx) => {
    await real(position, ctx);
    if (position && failing === 'time-out') throw new NotYetReadable(position, 15_000);
    if (position && failing === 'error') throw new Error('the read store went away');
  };
});
afterAll(() => t.close());
afterEach(() => {
  failing = null;
});

const key = (k: string) => ({ headers: { 'idempotency-key': k } });
const upsert = '/constituents?mode=upsert&matchOn=email';

describe('an upsert whose earlier try updated its match', () => {
  it('is resumed on that record when the update made it match no more (deactivated)', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const id = (await c.post('/constituents', { LastName: 'A', Email1: 'x@example.org' })).body.constituent.PkConstituent;
    const body = { LastName: 'Gone', Email1: 'x@example.org', IsActiveConstituent: false };
    failing = 'error';
    expect((await c.post(upsert, body, key('u'))).status).toBe(500);
    failing = null;
    const again = await c.post(upsert, body, key('u'));
    expect([again.status, again.body.created, again.body.constituent.PkConstituent, again.headers['idempotent-replayed']]).toEqual([200, false, id, 'true']);
    expect((await c.get('/constituents')).body.total).toBe(1);
  });

  it('is resumed on that record when another client changed its e-mail in between', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const id = (await c.post('/constituents', { LastName: 'A', Email1: 'x@example.org' })).body.constituent.PkConstituent;
    failing = 'error';
    expect((await c.post(upsert, { LastName: 'Upd', Email1: 'x@example.org' }, key('u1'))).status).toBe(500);
    failing = null;
    expect((await c.patch(`/constituents/${id}`, { Email1: 'y@example.org' })).status).toBe(200);
    const again = await c.post(upsert, { LastName: 'Upd', Email1: 'x@example.org' }, key('u1'));
    expect([again.status, again.body.created, again.body.constituent.PkConstituent]).toEqual([200, false, id]);
    expect((await c.get('/constituents')).body.total).toBe(1);
  });
});

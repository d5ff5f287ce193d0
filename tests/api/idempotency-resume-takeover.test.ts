import { beforeAll, describe, expect, it } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { NotYetReadable } from '../../projections/engine/status.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { appWithFailingSettle } from '../support/settle-failure.js';

/**
 * decisions.md §11: the retry that takes over a keyed write whose earlier try may have written
 * (a 5xx, or 503 write_pending) answers from what that try wrote, whatever happened in between.
 * Failures are injected through the runtime's settle, after the read models really settled.
 */
const settle = appWithFailingSettle();
let t: TestApp;
beforeAll(() => {
  t = settle.app();
});

const key = (k: string) => ({ headers: { 'idempotency-key': k } });
const upsert = '/constituents?mode=upsert&matchOn=email';

describe('an upsert whose earlier try updated its match', () => {
  it('is resumed on that record when the update made it match no more (deactivated)', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const id = (await c.post('/constituents', { LastName: 'A', Email1: 'x@example.org' })).body.constituent.PkConstituent;
    const body = { LastName: 'Gone', Email1: 'x@example.org', IsActiveConstituent: false };
    settle.fail('error');
    expect((await c.post(upsert, body, key('u'))).status).toBe(500);
    settle.fail(null);
    const again = await c.post(upsert, body, key('u'));
    expect([again.status, again.body.created, again.body.constituent.PkConstituent, again.headers['idempotent-replayed']]).toEqual([200, false, id, 'true']);
    expect((await c.get('/constituents')).body.total).toBe(1);
  });

  it('is resumed on that record when another client changed its e-mail in between', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const id = (await c.post('/constituents', { LastName: 'A', Email1: 'x@example.org' })).body.constituent.PkConstituent;
    settle.fail('error');
    expect((await c.post(upsert, { LastName: 'Upd', Email1: 'x@example.org' }, key('u1'))).status).toBe(500);
    settle.fail(null);
    expect((await c.patch(`/constituents/${id}`, { Email1: 'y@example.org' })).status).toBe(200);
    const again = await c.post(upsert, { LastName: 'Upd', Email1: 'x@example.org' }, key('u1'));
    expect([again.status, again.body.created, again.body.constituent.PkConstituent]).toEqual([200, false, id]);
    expect((await c.get('/constituents')).body.total).toBe(1);
  });
});

/** The retry's answers until the key is no longer in progress (the background wait has ended). */
async function untilAnswered<R extends { status: number; body: { error?: { code: string } } }>(send: () => Promise<R>): Promise<R> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await send();
    if (r.status !== 409 || r.body.error?.code !== 'idempotency_key_in_progress') return r;
    if (Date.now() > deadline) throw new Error('the key stayed in progress');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('an admin keyed create answered 503 write_pending', () => {
  it('is answered to the retry with the same key from its write: one record', async () => {
    const { admin, api } = await t.team();
    settle.fail('time-out');
    const first = await admin.post('/constituents', { LastName: 'AdminOnce' }, key('a1'));
    settle.fail(null);
    expect([first.status, first.body.error.code]).toEqual([503, 'write_pending']);
    const again = await untilAnswered(() => admin.post('/constituents', { LastName: 'AdminOnce' }, key('a1')));
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });
});

describe('a keyed write that answered 5xx before it handed anything to the log', () => {
  it('frees its key: another body on it runs', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    await c.post(upsert, { LastName: 'A', Email1: 'a@example.org' });
    // The upsert's wait for the claimed record (before any append of its own) gives up.
    settle.fail('time-out');
    const r = await c.post(upsert, { LastName: 'B', Email1: 'a@example.org' }, key('z'));
    settle.fail(null);
    expect(r.status).toBe(500);
    const other = await c.post('/constituents', { LastName: 'Different' }, key('z'));
    expect(other.status).toBe(201);
    expect((await c.get('/constituents')).body.total).toBe(2);
  });
});

describe("a write's background wait at the server's close", () => {
  it('is stopped, its key left to the retry (abandoned), instead of outliving the server', async () => {
    const own = await startTestApp();
    const services = own.runtime.services;
    const real = services.settle;
    let on = false;
    let waits = 0;
    // The request's own wait times out; the background wait (no context) then never ends.
    services.settle = async (position: Position | null, ctx) => {
      if (!on) return real(position, ctx);
      if (!ctx) return (waits++, new Promise<void>(() => {}));
      await real(position, ctx);
      if (position) throw new NotYetReadable(position, 15_000);
    };
    const abandoned: string[] = [];
    const store = services.idempotency;
    const abandon = store.abandon.bind(store);
    store.abandon = (scope, k, startedAt) => (abandoned.push(k), abandon(scope, k, startedAt));
    const { api } = await own.team();
    on = true;
    const r = await api.Integration.post('/constituents', { LastName: 'X' }, key('c1'));
    expect(r.status).toBe(503);
    expect(waits).toBe(1);
    await own.close();
    expect(abandoned).toEqual(['c1']);
    expect(waits).toBe(1);
  });
});

describe('a keyed write whose referenced record went between its tries', () => {
  it('is resumed, not refused: the earlier try passed its checks and its write stands', async () => {
    const { api, admin } = await t.team();
    const c = api.Integration;
    const person = (await c.post('/constituents', { LastName: 'Roe' })).body.constituent.PkConstituent;
    const v = (await c.post('/volunteers', { FkConstituent: person })).body.volunteer.PkVolunteer;
    const body = { VolunteerTaskTitle: 'Canvass', FkVolunteer: v };
    settle.fail('error');
    expect((await c.post('/volunteer-tasks', body, key('t'))).status).toBe(500);
    settle.fail(null);
    expect((await admin.del(`/volunteers/${v}`)).status).toBe(200);
    const again = await c.post('/volunteer-tasks', body, key('t'));
    expect([again.status, again.headers['idempotent-replayed']], again.raw).toEqual([201, 'true']);
    expect((await c.get('/volunteer-tasks')).body.total).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constituentStream } from '../../domain/constituent/events.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { holdLogCall } from '../support/held-log.js';

/**
 * Spec 4.1 (an upsert updates its one active match, 200, or creates, 201) and §7 (404: no such
 * record) under an upsert whose match goes away mid-request (found by review 27e: an upsert racing
 * the delete of its only match answered 404 naming the deleted id). Scripted: the upsert is held
 * where its update reads the matched record's stream, after it picked that match in the read model.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

let n = 0;
async function setup() {
  const team = await t.team([['Integration', 'read_write']]);
  const api = team.api.Integration;
  const email = `stale${++n}@example.org`;
  const c = (await api.post('/constituents', { FirstName: 'Old', LastName: 'Match', Email1: email })).body.constituent.PkConstituent as number;
  return { team, api, email, c };
}

/** Runs `meanwhile` while the upsert (or batch) `send` is held at its update's read of constituent `c`. */
async function whileHeld<T>(c: number, send: () => Promise<T>, meanwhile: () => Promise<void>): Promise<T> {
  const held = holdLogCall(t, 'readStream', constituentStream(c));
  const sent = send();
  await held.reached;
  await meanwhile();
  held.release();
  return sent;
}

describe('an upsert whose match goes away mid-request (spec 4.1)', () => {
  it('its only match deleted: matches again, finds none, and creates (201), not 404', async () => {
    const { team, api, email, c } = await setup();
    const up = await whileHeld(
      c,
      () => api.post('/constituents?mode=upsert&matchOn=email', { Email1: email, FirstName: 'New' }),
      async () => expect((await team.admin.del(`/constituents/${c}`)).status).toBe(200),
    );
    expect(up.status, up.raw).toBe(201);
    expect(up.body.created).toBe(true);
    expect(up.body.constituent.PkConstituent).not.toBe(c);
    expect(up.body.constituent).toMatchObject({ Email1: email, FirstName: 'New' });
    expect((await t.runtime.services.log.readStream(constituentStream(c))).map((e) => e.type)).toEqual(['ConstituentCreated', 'ConstituentDeleted']);
  });

  it('its match deleted and another given the email meanwhile: updates that one (200)', async () => {
    const { team, api, email, c } = await setup();
    let other = 0;
    const up = await whileHeld(
      c,
      () => api.post('/constituents?mode=upsert&matchOn=email', { Email1: email, FirstName: 'New' }),
      async () => {
        expect((await team.admin.del(`/constituents/${c}`)).status).toBe(200);
        other = (await api.post('/constituents', { FirstName: 'Other', Email1: email })).body.constituent.PkConstituent;
      },
    );
    expect(up.status, up.raw).toBe(200);
    expect(up.body).toMatchObject({ created: false, constituent: { PkConstituent: other, FirstName: 'New' } });
  });

  it('its match given another email meanwhile: that record is left as changed, and the upsert creates', async () => {
    const { api, email, c } = await setup();
    const up = await whileHeld(
      c,
      () => api.post('/constituents?mode=upsert&matchOn=email', { Email1: email, FirstName: 'New' }),
      async () => expect((await api.patch(`/constituents/${c}`, { Email1: 'moved@example.org' })).status).toBe(200),
    );
    expect(up.status, up.raw).toBe(201);
    expect(up.body.constituent.PkConstituent).not.toBe(c);
    expect((await api.get(`/constituents/${c}`)).body.constituent).toMatchObject({ Email1: 'moved@example.org', FirstName: 'Old' });
  });

  it('a batch upsert item whose match is deleted mid-batch answers 201 (decisions.md §14: the single upsert\'s answer)', async () => {
    const { team, api, email, c } = await setup();
    const batch = await whileHeld(
      c,
      () => api.post('/constituents/batch?mode=upsert&matchOn=email', { items: [{ Email1: email, FirstName: 'New' }] }),
      async () => expect((await team.admin.del(`/constituents/${c}`)).status).toBe(200),
    );
    expect(batch.status, batch.raw).toBe(200);
    expect(batch.body.results[0]).toMatchObject({ status: 201, created: true, constituent: { Email1: email, FirstName: 'New' } });
    expect(batch.body.results[0].constituent.PkConstituent).not.toBe(c);
  });

  it('with nothing racing, the upsert updates its match reading its stream once', async () => {
    const { api, email, c } = await setup();
    const log = t.runtime.services.log;
    let reads = 0;
    t.runtime.services.log = new Proxy(log, {
      get(target, prop) {
        const v = Reflect.get(target, prop);
        if (prop === 'readStream') return (s: string) => (s === constituentStream(c) && reads++, target.readStream(s));
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    try {
      const up = await api.post('/constituents?mode=upsert&matchOn=email', { Email1: email, FirstName: 'New' });
      expect(up.status, up.raw).toBe(200);
      expect(up.body.constituent).toMatchObject({ PkConstituent: c, FirstName: 'New' });
    } finally {
      t.runtime.services.log = log;
    }
    expect(reads).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { constituentStream } from '../../domain/constituent/events.js';
import { volunteerClaimStream, volunteerStream } from '../../domain/volunteer/events.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { holdLogCall } from '../support/held-log.js';

/**
 * Spec 2.2, a volunteer is always an existing constituent, under a registration racing the delete
 * of its constituent (found by review 27e: 8 of 40 racing tries left a volunteer of a deleted
 * constituent). Each ordering is scripted by holding one log call of the registration.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function setup() {
  const team = await t.team([['Integration', 'read_write']]);
  const api = team.api.Integration;
  const c = (await api.post('/constituents', { FirstName: 'Ray', LastName: 'Doe' })).body.constituent.PkConstituent as number;
  return { team, api, c };
}

const typesOf = async (stream: string) => (await t.runtime.services.log.readStream(stream)).map((e) => e.type);

describe('a registration racing the delete of its constituent (spec 2.2)', () => {
  it('the delete and its cascade run before the volunteer is written: the registration deletes it, answering 201 with it as written', async () => {
    const { team, api, c } = await setup();
    // The registration has passed its check of the constituent; held before its claim.
    const held = holdLogCall(t, 'append', volunteerClaimStream(c));
    const registering = api.post('/volunteers', { FkConstituent: c });
    await held.reached;
    const del = await team.admin.del(`/constituents/${c}`);
    expect(del.status, del.raw).toBe(200);
    held.release();
    const reg = await registering;
    expect(reg.status, reg.raw).toBe(201);
    expect(reg.body.created).toBe(true);
    const v = reg.body.volunteer.PkVolunteer as number;
    expect(reg.body.volunteer).toMatchObject({ FkConstituent: c, IsActive: true, ConstituentName: null });
    expect(reg.headers.etag).toBe('"1"');
    expect((await api.get(`/volunteers/${v}`)).status).toBe(404);
    expect((await api.get(`/constituents/${c}`)).status).toBe(404);
    expect(await typesOf(volunteerStream(v))).toEqual(['VolunteerCreated', 'VolunteerDeleted']);
  });

  it('the cascade finds the volunteer too: it is deleted once, and the registration still answers 201', async () => {
    const { team, api, c } = await setup();
    // Held at its look at the constituent, after its volunteer is written and readable.
    const held = holdLogCall(t, 'readStream', constituentStream(c));
    const registering = api.post('/volunteers', { FkConstituent: c });
    await Promise.race([held.reached, registering]);
    expect(held.wasReached, 'the registration looks at its constituent in the log once its volunteer is written').toBe(true);
    const del = await team.admin.del(`/constituents/${c}`);
    expect(del.status, del.raw).toBe(200);
    held.release();
    const reg = await registering;
    expect(reg.status, reg.raw).toBe(201);
    const v = reg.body.volunteer.PkVolunteer as number;
    expect((await api.get(`/volunteers/${v}`)).status).toBe(404);
    expect(await typesOf(volunteerStream(v))).toEqual(['VolunteerCreated', 'VolunteerDeleted']);
  });

  it('a batch item racing the delete answers the same 201, and leaves no volunteer', async () => {
    const { team, api, c } = await setup();
    const held = holdLogCall(t, 'append', volunteerClaimStream(c));
    const registering = api.post('/volunteers/batch', { items: [{ FkConstituent: c }] });
    await held.reached;
    expect((await team.admin.del(`/constituents/${c}`)).status).toBe(200);
    held.release();
    const batch = await registering;
    expect(batch.status, batch.raw).toBe(200);
    const [item] = batch.body.results;
    expect(item).toMatchObject({ status: 201, created: true, volunteer: { FkConstituent: c } });
    expect((await api.get(`/volunteers/${item.volunteer.PkVolunteer}`)).status).toBe(404);
  });

  it('an erasure racing the registration is not a delete: the volunteer stays, as erasure keeps linked records (decisions.md §17)', async () => {
    const { team, api, c } = await setup();
    const held = holdLogCall(t, 'append', volunteerClaimStream(c));
    const registering = api.post('/volunteers', { FkConstituent: c });
    await held.reached;
    const erased = await t.admin.post(`/teams/${team.id}/constituents/${c}/erase`, {});
    expect(erased.status, erased.raw).toBe(200);
    held.release();
    const reg = await registering;
    expect(reg.status, reg.raw).toBe(201);
    expect((await api.get(`/volunteers/${reg.body.volunteer.PkVolunteer}`)).status).toBe(200);
  });

  it('with no delete, a registration answers its volunteer as before', async () => {
    const { api, c } = await setup();
    const reg = await api.post('/volunteers', { FkConstituent: c });
    expect(reg.status, reg.raw).toBe(201);
    expect(reg.body.volunteer).toMatchObject({ FkConstituent: c, ConstituentName: 'Ray Doe' });
    expect((await api.get(`/volunteers/${reg.body.volunteer.PkVolunteer}`)).status).toBe(200);
  });
});

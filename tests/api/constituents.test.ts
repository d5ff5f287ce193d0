import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type Client, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function fresh(): Promise<{ api: Client; admin: Client; id: number }> {
  const team = await t.team();
  return { api: team.api.Integration, admin: team.admin, id: team.id };
}

describe('creating and reading constituents', () => {
  it('answers 201 {created, constituent} with every field, unset ones null', async () => {
    const { api } = await fresh();
    const r = await api.post('/constituents', { FirstName: 'Grace', LastName: 'Hopper', MailingState: 'virginia', DateOfBirth: '1906-12-09', IsSolicitOk: false });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(true);
    const c = r.body.constituent;
    expect(c).toMatchObject({ ConstituentName: 'Grace Hopper', MailingState: 'VA', DateOfBirth: '1906-12-09', IsSolicitOk: false, FkConstituentType: 1, IsActiveConstituent: true, Email2: null, Website1: null });
    expect(c.PkConstituent).toBeGreaterThan(0);
    expect(c.FkTeam).toEqual(expect.any(Number));
    expect(c.DateCreated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    expect(c.DateLastModified).toBe(c.DateCreated);
    for (const f of ['MiddleInitial', 'Nickname', 'Salutation', 'Email1', 'Phone1', 'Phone2', 'Phone3', 'MailingAddressLine1', 'MailingAddressLine2', 'MailingCity', 'MailingZipCode', 'IsEmailOk', 'IsPhoneOk', 'IsTextOk', 'ConstituentDescription'])
      expect(c[f], f).toBeNull();
  });

  it('gives ids that are never reused', async () => {
    const { api } = await fresh();
    const ids = new Set<number>();
    for (let i = 0; i < 5; i++) ids.add((await api.post('/constituents', { LastName: `N${i}` })).body.constituent.PkConstituent);
    expect(ids.size).toBe(5);
  });

  it('writes nothing on a failed create', async () => {
    const { api, admin } = await fresh();
    const before = (await admin.get('/activity')).body.total;
    expect((await api.post('/constituents', { FkConstituentType: 3 })).body.error).toMatchObject({ code: 'missing_field', field: 'ConstituentName' });
    expect((await api.post('/constituents', { LastName: 'X', Email1: 'bad' })).status).toBe(400);
    expect((await api.get('/constituents')).body.total).toBe(0);
    expect((await admin.get('/activity')).body.total).toBe(before);
  });
});

describe('updating constituents', () => {
  it('changes only the sent fields and answers {constituent}', async () => {
    const { api } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Ada', LastName: 'Byron', Email1: 'ada@example.org', Phone2: '5558675309' })).body.constituent;
    const r = await api.patch(`/constituents/${c.PkConstituent}`, { LastName: 'Lovelace', Phone2: null });
    expect(r.status).toBe(200);
    expect(r.body.constituent).toMatchObject({ FirstName: 'Ada', LastName: 'Lovelace', ConstituentName: 'Ada Lovelace', Email1: 'ada@example.org', Phone2: null });
    expect((await api.get(`/constituents/${c.PkConstituent}`)).body.constituent.LastName).toBe('Lovelace');
  });

  it('records nothing for a PATCH that changes nothing', async () => {
    const { api, admin } = await fresh();
    const c = (await api.post('/constituents', { FirstName: 'Ada', Email1: 'ada@example.org' })).body.constituent;
    const before = (await admin.get(`/history/constituents/${c.PkConstituent}`)).body.events.length;
    const r = await api.patch(`/constituents/${c.PkConstituent}`, { FirstName: 'Ada', Email1: 'ada@example.org' });
    expect(r.status).toBe(200);
    expect(r.body.constituent.DateLastModified).toBe(c.DateLastModified);
    expect((await admin.get(`/history/constituents/${c.PkConstituent}`)).body.events.length).toBe(before);
    expect((await api.patch(`/constituents/${c.PkConstituent}`, {})).status).toBe(200);
  });

  it('keeps the type rules across updates', async () => {
    const { api } = await fresh();
    const c = (await api.post('/constituents', { LastName: 'Smith' })).body.constituent;
    const cleared = await api.patch(`/constituents/${c.PkConstituent}`, { FkConstituentType: 2, ConstituentName: null });
    expect(cleared.body.error).toMatchObject({ code: 'invalid_field', field: 'ConstituentName' });
    expect((await api.get(`/constituents/${c.PkConstituent}`)).body.constituent.FkConstituentType).toBe(1);
    const h = await api.patch(`/constituents/${c.PkConstituent}`, { FkConstituentType: 2, ConstituentName: 'The Smiths' });
    expect(h.body.constituent).toMatchObject({ FkConstituentType: 2, ConstituentName: 'The Smiths' });
  });
});

describe('finding constituents', () => {
  it('looks up by email exactly and case-insensitively', async () => {
    const { api } = await fresh();
    await api.post('/constituents', { LastName: 'A', Email1: 'Pat@Example.org' });
    await api.post('/constituents', { LastName: 'B', Email1: 'pat@example.org.uk' });
    await api.post('/constituents', { LastName: 'C', Email2: 'pat@example.org' });
    const r = await api.get('/constituents?email=PAT@example.ORG');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total: 1, page: 1, pageSize: 25 });
    expect(r.body.constituents[0].LastName).toBe('A');
  });

  it('searches name, email and id, literally, with paging in id order', async () => {
    const { api } = await fresh();
    const made = [];
    for (const [f, l, e] of [['Ann', 'Lee', 'ann@x.org'], ['Bob', 'Annis', 'bob@x.org'], ['Cy', 'Moss', 'cy.ann@x.org'], ['Di', 'Wu', 'di@x.org'], ['Ed', 'a.b', null]])
      made.push((await api.post('/constituents', { FirstName: f, LastName: l, Email1: e })).body.constituent);
    const ann = await api.get('/constituents?search=ANN');
    expect(ann.body.constituents.map((c: { FirstName: string }) => c.FirstName)).toEqual(['Ann', 'Bob', 'Cy']);
    const page2 = await api.get('/constituents?search=ann&page=2&pageSize=2');
    expect(page2.body).toMatchObject({ page: 2, pageSize: 2, total: 3 });
    expect(page2.body.constituents.map((c: { FirstName: string }) => c.FirstName)).toEqual(['Cy']);
    const byId = await api.get(`/constituents?search=${made[3].PkConstituent}`);
    expect(byId.body.constituents.map((c: { FirstName: string }) => c.FirstName)).toContain('Di');
    expect((await api.get('/constituents?search=a.b')).body.total).toBe(1);
    expect((await api.get('/constituents?search=a*')).body.total).toBe(0);
    expect((await api.get('/constituents?search=(')).body.total).toBe(0);
    // A search holding U+0001 (the character the stores join a record's fields with) is literal
    // too: no field holds it, so nothing matches, not every record, nor "ann" and "lee" across two fields.
    expect((await api.get('/constituents?search=%01')).body.total).toBe(0);
    expect((await api.get(`/constituents?search=${encodeURIComponent('ann\u0001lee')}`)).body.total).toBe(0);
    expect((await api.get(`/volunteers?search=${encodeURIComponent('\u0001')}`)).body.total).toBe(0);
    const all = await api.get('/constituents');
    expect(all.body.constituents.map((c: { PkConstituent: number }) => c.PkConstituent)).toEqual(made.map((c) => c.PkConstituent));
  });
});

describe('upsert by email', () => {
  it('creates when none matches, updates the one active match, refuses several', async () => {
    const { api } = await fresh();
    const first = await api.post('/constituents?mode=upsert&matchOn=email', { FirstName: 'Lin', Email1: 'lin@example.org' });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    const again = await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'Chen', Email1: 'LIN@example.org' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, constituent: { PkConstituent: first.body.constituent.PkConstituent, FirstName: 'Lin', LastName: 'Chen' } });
    await api.post('/constituents', { FirstName: 'Other', Email1: 'lin@example.org' });
    const amb = await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'X', Email1: 'lin@example.org' });
    expect(amb.status).toBe(409);
    expect(amb.body.error.code).toBe('ambiguous_match');
  });

  it('never matches an inactive constituent', async () => {
    const { api } = await fresh();
    const old = (await api.post('/constituents', { LastName: 'Old', Email1: 'sam@example.org', IsActiveConstituent: false })).body.constituent;
    const r = await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'New', Email1: 'sam@example.org' });
    expect(r.status).toBe(201);
    expect(r.body.constituent.PkConstituent).not.toBe(old.PkConstituent);
  });

  it('needs Email1 and both parameters', async () => {
    const { api } = await fresh();
    expect((await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'X' })).body.error).toMatchObject({ code: 'missing_field', field: 'Email1' });
    expect((await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'X', Email1: null })).body.error).toMatchObject({ code: 'invalid_field', field: 'Email1' });
    // An internationalised top-level domain in its ASCII form is an address like any other.
    const idn = await api.post('/constituents?mode=upsert&matchOn=email', { LastName: 'X', Email1: 'user@example.xn--p1ai' });
    expect([idn.status, idn.body.constituent?.Email1]).toEqual([201, 'user@example.xn--p1ai']);
    expect((await api.post('/constituents?mode=upsert', { LastName: 'X', Email1: 'a@b.org' })).body.error).toMatchObject({ code: 'invalid_field', field: 'matchOn' });
    expect((await api.post('/constituents?mode=replace&matchOn=email', { LastName: 'X', Email1: 'a@b.org' })).body.error).toMatchObject({ code: 'invalid_field', field: 'mode' });
  });

  it('creates exactly one constituent when twenty upserts of a new email race', async () => {
    const { api } = await fresh();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.post('/constituents?mode=upsert&matchOn=email', { LastName: `Racer${i}`, Email1: 'race@example.org' })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([...Array(19).fill(200), 201].sort());
    const ids = new Set(answers.map((a) => a.body.constituent.PkConstituent));
    expect(ids.size).toBe(1);
    expect((await api.get('/constituents?email=race@example.org')).body.total).toBe(1);
  });
});

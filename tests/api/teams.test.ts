import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe("a team's alertEmail (decisions.md 9 and 12)", () => {
  it('is kept when given on creation and null when not', async () => {
    const withEmail = await t.admin.post('/teams', { name: 'Ops', alertEmail: 'ops@example.org' });
    expect(withEmail.status).toBe(201);
    expect(withEmail.body.team).toEqual({ id: expect.any(Number), name: 'Ops', alertEmail: 'ops@example.org', createdAt: expect.any(String) });
    const without = await t.admin.post('/teams', { name: 'Quiet' });
    expect(without.body.team.alertEmail).toBeNull();
  });

  it('is refused when it is not an email address, naming the field', async () => {
    for (const alertEmail of ['not-an-email', 42, '']) {
      const r = await t.admin.post('/teams', { name: 'Bad', alertEmail });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'alertEmail' });
    }
  });

  it('is set, changed and cleared by PATCH, which also renames', async () => {
    const id = (await t.admin.post('/teams', { name: 'Before' })).body.team.id;
    const set = await t.admin.patch(`/teams/${id}`, { alertEmail: 'alerts@example.org' });
    expect(set.status).toBe(200);
    expect(set.body.team).toMatchObject({ id, name: 'Before', alertEmail: 'alerts@example.org' });
    const renamed = await t.admin.patch(`/teams/${id}`, { name: 'After' });
    expect(renamed.body.team).toMatchObject({ name: 'After', alertEmail: 'alerts@example.org' });
    const cleared = await t.admin.patch(`/teams/${id}`, { alertEmail: null });
    expect(cleared.body.team).toMatchObject({ name: 'After', alertEmail: null });
  });

  it('refuses a bad PATCH naming the field, an unknown field, and an unknown team', async () => {
    const id = (await t.admin.post('/teams', { name: 'Patched' })).body.team.id;
    const bad = await t.admin.patch(`/teams/${id}`, { alertEmail: 'nope@' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_field', field: 'alertEmail' });
    const blank = await t.admin.patch(`/teams/${id}`, { name: '' });
    expect(blank.status).toBe(400);
    expect(blank.body.error.field).toBe('name');
    const unknown = await t.admin.patch(`/teams/${id}`, { colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'unknown_field', field: 'colour' });
    const missing = await t.admin.patch('/teams/999999', { name: 'Ghost' });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
  });
});

describe('listing teams', () => {
  it('answers every team with its alertEmail', async () => {
    const a = (await t.admin.post('/teams', { name: 'Listed A', alertEmail: 'a@example.org' })).body.team;
    const b = (await t.admin.post('/teams', { name: 'Listed B' })).body.team;
    const r = await t.admin.get('/teams');
    expect(r.status).toBe(200);
    expect(r.body.teams).toEqual(expect.arrayContaining([a, b]));
    const ids = r.body.teams.map((x: { id: number }) => x.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('a first constituent', () => {
  it('is created and read back', async () => {
    const { api } = await t.team();
    const r = await api.Integration.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ada@example.org', Phone1: '(555) 867-5309' });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.constituent).toMatchObject({ ConstituentName: 'Ada Lovelace', Phone1: '5558675309', Nickname: null });
    console.log(r.raw);
    const g = await api.Integration.get(`/constituents/${r.body.constituent.PkConstituent}`);
    expect(g.status, g.raw).toBe(200);
    expect(g.body.constituent.Email1).toBe('ada@example.org');
  });
});

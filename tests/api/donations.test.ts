import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

async function donor(team: Awaited<ReturnType<TestApp['team']>>) {
  return (await team.api.Integration.post('/constituents', { FirstName: 'Donor' })).body.constituent.PkConstituent as number;
}

describe('donations in the application', () => {
  it('records, updates, receipts, refunds and deletes a donation', async () => {
    const team = await t.team();
    const c = await donor(team);
    const r = await team.admin.post('/donations', { FkConstituent: c, Amount: 100, Purpose: 'General' });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.donation).toMatchObject({ FkConstituent: c, Amount: 100, Purpose: 'General', Source: null, IsReceipted: false, IsThanked: false, RefundAmount: null, FkTeam: team.id });
    expect(r.body.donation.GiftDate).toMatch(/^\d{4}-\d\d-\d\d$/);
    const id = r.body.donation.PkDonation;
    expect((await team.admin.patch(`/donations/${id}`, { Source: 'Import' })).body.donation.Source).toBe('Import');
    expect((await team.admin.post(`/donations/${id}/receipt`)).body.donation.IsReceipted).toBe(true);
    const refund = await team.admin.post(`/donations/${id}/refund`, { Amount: 60 });
    expect(refund.status, refund.raw).toBe(201);
    expect(refund.body.donation).toMatchObject({ Amount: -60, RefundAmount: 60, FkRefundedDonation: id });
    const tooMuch = await team.admin.post(`/donations/${id}/refund`, { Amount: 50 });
    expect(tooMuch.body.error).toMatchObject({ code: 'invalid_field', field: 'Amount' });
    expect((await team.admin.del(`/donations/${id}`)).status).toBe(200);
    expect((await team.admin.post(`/donations/${id}/thank`)).status).toBe(404);
  });

  it.each([
    [{ Amount: 5 }, 'missing_field', 'FkConstituent'],
    [{ FkConstituent: 999999, Amount: 5 }, 'invalid_field', 'FkConstituent'],
    [{ FkConstituent: 1, Amount: 0 }, 'invalid_field', 'Amount'],
    [{ FkConstituent: 1, Amount: '5' }, 'invalid_field', 'Amount'],
    [{ FkConstituent: 1, Amount: 1.234 }, 'invalid_field', 'Amount'],
    [{ FkConstituent: 1, Amount: 5, IsReceipted: true }, 'unknown_field', 'IsReceipted'],
  ])('refuses %j and writes nothing', async (body, code, field) => {
    const team = await t.team();
    const c = await donor(team);
    const b = { ...body } as Record<string, unknown>;
    if (b.FkConstituent === 1) b.FkConstituent = c;
    const r = await team.admin.post('/donations', b);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code, field });
  });

  it('says the same of a zero and a negative Amount, of a gift or a recurring one: more than 0', async () => {
    const team = await t.team();
    const c = await donor(team);
    for (const Amount of [0, -5])
      for (const [path, extra] of [['/donations', {}], ['/recurring-gifts', { Frequency: 'monthly', StartDate: '2030-01-01' }]] as const) {
        const r = await team.admin.post(path, { FkConstituent: c, Amount, ...extra });
        expect(r.body.error, `${path} ${Amount}`).toEqual({ code: 'invalid_field', field: 'Amount', message: 'Amount must be greater than 0.' });
      }
  });

  it('does not let a gift shrink below what was already refunded', async () => {
    const team = await t.team();
    const id = (await team.admin.post('/donations', { FkConstituent: await donor(team), Amount: 100 })).body.donation.PkDonation;
    expect((await team.admin.post(`/donations/${id}/refund`, { Amount: 30 })).status).toBe(201);
    const r = await team.admin.patch(`/donations/${id}`, { Amount: 20 });
    expect(r.status, r.raw).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'Amount' });
    const ok = await team.admin.patch(`/donations/${id}`, { Amount: 30 });
    expect(ok.status, ok.raw).toBe(200);
    expect((await team.admin.post(`/donations/${id}/refund`, { Amount: 0.01 })).body.error).toMatchObject({ code: 'invalid_field', field: 'Amount' });
  });

  it('does not let a team record a gift for another team\'s constituent', async () => {
    const a = await t.team();
    const b = await t.team();
    const r = await b.admin.post('/donations', { FkConstituent: await donor(a), Amount: 5 });
    expect(r.body.error).toMatchObject({ code: 'invalid_field', field: 'FkConstituent' });
  });

  it('answers an update in order: a bad field, then a missing or locked donation, then a foreign donor', async () => {
    const a = await t.team();
    const b = await t.team();
    const d = (await a.admin.post('/donations', { FkConstituent: await donor(a), Amount: 10 })).body.donation.PkDonation;
    const foreign = await donor(b);
    expect((await a.admin.patch(`/donations/${d}`, { FkConstituent: 'x' })).body.error).toMatchObject({ code: 'invalid_field', field: 'FkConstituent' });
    expect((await a.admin.patch('/donations/999999', { FkConstituent: foreign })).status).toBe(404);
    await a.admin.post(`/donations/${d}/lock`);
    expect((await a.admin.patch(`/donations/${d}`, { FkConstituent: foreign })).body.error.code).toBe('record_protected');
    await a.admin.post(`/donations/${d}/unlock`);
    expect((await a.admin.patch(`/donations/${d}`, { FkConstituent: foreign })).body.error).toMatchObject({ code: 'invalid_field', field: 'FkConstituent' });
  });

  it('starts and cancels a recurring gift, once', async () => {
    const team = await t.team();
    const c = await donor(team);
    const g = await team.admin.post('/recurring-gifts', { FkConstituent: c, Amount: 10, Frequency: 'monthly', StartDate: '2030-01-01' });
    expect(g.status, g.raw).toBe(201);
    expect(g.body.recurringGift).toMatchObject({ Amount: 10, Frequency: 'monthly', StartDate: '2030-01-01', CanceledDate: null });
    const bad = await team.admin.post('/recurring-gifts', { FkConstituent: c, Amount: 10, Frequency: 'hourly' });
    expect(bad.body.error).toMatchObject({ code: 'invalid_field', field: 'Frequency' });
    const x = await team.admin.del(`/recurring-gifts/${g.body.recurringGift.PkRecurringGift}`);
    expect(x.status, x.raw).toBe(200);
    expect(x.body.recurringGift.CanceledDate).toMatch(/^\d{4}-\d\d-\d\d$/);
    expect((await team.admin.del(`/recurring-gifts/${g.body.recurringGift.PkRecurringGift}`)).status).toBe(404);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromLog } from '../../domain/events.js';
import type { Projector } from '../../projections/engine/projector.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { constituentsProjection } from '../../projections/constituents.js';
import { EVENT_TICKETS, eventTicketsProjector } from '../../projections/event-tickets.js';
import { EVENTS, eventsProjection } from '../../projections/events.js';
import { lookupsProjection } from '../../projections/lookups.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';
import { eq } from '../../projections/store/port.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Team = Awaited<ReturnType<TestApp['team']>>;

async function setup(team: Team) {
  const event = (await team.api.Integration.post('/events', { EventTitle: 'Spring Gala', StartDate: '2026-05-01' })).body.event.PkEvent as number;
  const buyer = (await team.api.Integration.post('/constituents', { FirstName: 'Ada', LastName: 'Lovelace' })).body.constituent.PkConstituent as number;
  return { event, buyer };
}

const sale = (team: Team, body: object) => team.admin.post('/event-tickets', body);
const tids = (r: { body: { eventTickets: Array<{ PkEventTicket: number }> } }) => r.body.eventTickets.map((x) => x.PkEventTicket);

describe('recording a ticket sale through the application', () => {
  it('answers 201 {eventTicket} with names from the linked records and NetRevenue = gross - fees', async () => {
    const team = await t.team();
    const { event, buyer } = await setup(team);
    const r = await sale(team, {
      FkEvent: event, FkConstituent: buyer, TicketTypeName: 'VIP', Quantity: 2, GrossAmount: 150.1, MerchantFees: 4.65,
      TaxDeductibleAmount: 50, PurchaseDate: '2026-04-01T15:30:00-04:00', IsPaidInFull: false,
    });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.eventTicket).toMatchObject({
      FkEvent: event, EventTitle: 'Spring Gala', FkConstituent: buyer, PurchaserName: 'Ada Lovelace', TicketTypeName: 'VIP', Quantity: 2,
      GrossAmount: 150.1, MerchantFees: 4.65, NetRevenue: 145.45, TaxDeductibleAmount: 50, FkDonation: null,
      PurchaseDate: '2026-04-01T19:30:00', IsPaidInFull: false,
    });
    const id = r.body.eventTicket.PkEventTicket;
    const g = await team.api.Integration.get(`/event-tickets/${id}`);
    expect(g.status).toBe(200);
    expect(g.body.eventTicket).toEqual(r.body.eventTicket);
    expect((await team.admin.get(`/history/event-tickets/${id}`)).body.events.map((e: { type: string }) => e.type)).toEqual(['EventTicketCreated']);
  });

  it('defaults Quantity 1, no fees, nothing tax-deductible, paid in full, purchased now; and carries the donation it generated', async () => {
    const team = await t.team();
    const other = await t.team();
    const { event, buyer } = await setup(team);
    const donation = await team.admin.post('/donations', { FkConstituent: buyer, Amount: 10 });
    expect(donation.status, donation.raw).toBe(201);
    const donationId = donation.body.donation.PkDonation;
    const r = await sale(team, { FkEvent: event, FkConstituent: buyer, GrossAmount: 25, FkDonation: donationId });
    expect(r.status, r.raw).toBe(201);
    expect(r.body.eventTicket).toMatchObject({ Quantity: 1, MerchantFees: 0, TaxDeductibleAmount: 0, NetRevenue: 25, IsPaidInFull: true, FkDonation: donationId, TicketTypeName: null });
    const theirs = await other.admin.post('/donations', { FkConstituent: (await setup(other)).buyer, Amount: 10 });
    for (const id of [theirs.body.donation.PkDonation, 987654]) {
      const bad = await sale(team, { FkEvent: event, FkConstituent: buyer, GrossAmount: 25, FkDonation: id });
      expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'invalid_field', 'FkDonation']);
    }
    expect(Math.abs(Date.parse(r.body.eventTicket.PurchaseDate + 'Z') - Date.now())).toBeLessThan(60_000);
  });

  it("refuses another team's or a deleted event, constituent or donation, and bad amounts, writing nothing", async () => {
    const team = await t.team();
    const other = await t.team();
    const { event, buyer } = await setup(team);
    const theirs = await setup(other);
    const gone = (await team.api.Integration.post('/events', { EventTitle: 'Gone' })).body.event.PkEvent;
    await team.admin.del(`/events/${gone}`);
    const goneBuyer = (await team.api.Integration.post('/constituents', { FirstName: 'Gone' })).body.constituent.PkConstituent;
    await team.admin.del(`/constituents/${goneBuyer}`);
    const goneGift = (await team.admin.post('/donations', { FkConstituent: buyer, Amount: 5 })).body.donation.PkDonation;
    await team.admin.del(`/donations/${goneGift}`);
    const ok = { FkEvent: event, FkConstituent: buyer, GrossAmount: 10 };
    const cases: Array<[object, string, string]> = [
      [{ ...ok, FkEvent: theirs.event }, 'invalid_field', 'FkEvent'],
      [{ ...ok, FkEvent: gone }, 'invalid_field', 'FkEvent'],
      [{ ...ok, FkConstituent: theirs.buyer }, 'invalid_field', 'FkConstituent'],
      [{ ...ok, FkConstituent: goneBuyer }, 'invalid_field', 'FkConstituent'],
      [{ ...ok, FkDonation: goneGift }, 'invalid_field', 'FkDonation'],
      [{ FkConstituent: buyer, GrossAmount: 10 }, 'missing_field', 'FkEvent'],
      [{ FkEvent: event, GrossAmount: 10 }, 'missing_field', 'FkConstituent'],
      [{ FkEvent: event, FkConstituent: buyer }, 'missing_field', 'GrossAmount'],
      [{ ...ok, GrossAmount: -1 }, 'invalid_field', 'GrossAmount'],
      [{ ...ok, GrossAmount: 10.005 }, 'invalid_field', 'GrossAmount'],
      [{ ...ok, GrossAmount: '10' }, 'invalid_field', 'GrossAmount'],
      [{ ...ok, MerchantFees: 11 }, 'invalid_field', 'MerchantFees'],
      [{ ...ok, TaxDeductibleAmount: 10.01 }, 'invalid_field', 'TaxDeductibleAmount'],
      [{ ...ok, Quantity: 0 }, 'invalid_field', 'Quantity'],
      [{ ...ok, PurchaseDate: '2026-02-30T10:00:00' }, 'invalid_field', 'PurchaseDate'],
      [{ ...ok, FkDonation: 0 }, 'invalid_field', 'FkDonation'],
      [{ ...ok, IsPaidInFull: null }, 'invalid_field', 'IsPaidInFull'],
      [{ ...ok, NetRevenue: 10 }, 'unknown_field', 'NetRevenue'],
      [{ ...ok, EventTitle: 'x' }, 'unknown_field', 'EventTitle'],
      [{ ...ok, PurchaserName: 'x' }, 'unknown_field', 'PurchaserName'],
      [{ ...ok, PkEventTicket: 1 }, 'unknown_field', 'PkEventTicket'],
    ];
    const head = await t.runtime.services.log.head();
    for (const [body, code, field] of cases) {
      const r = await sale(team, body);
      expect([r.status, r.body.error.code, r.body.error.field], JSON.stringify(body)).toEqual([400, code, field]);
    }
    expect(await t.runtime.services.log.head()).toEqual(head);
    expect((await team.api.Integration.get('/event-tickets')).body.total).toBe(0);
  });

  it('is read-only in the public API', async () => {
    const team = await t.team();
    const { event, buyer } = await setup(team);
    const r = await team.api.Integration.post('/event-tickets', { FkEvent: event, FkConstituent: buyer, GrossAmount: 1 });
    expect(r.status).toBe(404);
    const id = (await sale(team, { FkEvent: event, FkConstituent: buyer, GrossAmount: 1 })).body.eventTicket.PkEventTicket;
    expect((await team.api.Integration.patch(`/event-tickets/${id}`, { Quantity: 3 })).status).toBe(404);
    expect((await team.admin.del(`/event-tickets/${id}`)).status).toBe(404);
    expect((await team.api.Integration.get(`/event-tickets/${id}`)).body.eventTicket.Quantity).toBe(1);
  });
});

describe('reading ticket sales', () => {
  it('follows renames of the event and the purchaser, and keeps the sale when the event is deleted', async () => {
    const team = await t.team();
    const { event, buyer } = await setup(team);
    const id = (await sale(team, { FkEvent: event, FkConstituent: buyer, GrossAmount: 5 })).body.eventTicket.PkEventTicket;
    await team.api.Integration.patch(`/events/${event}`, { EventTitle: 'Summer Gala' });
    await team.api.Integration.patch(`/constituents/${buyer}`, { FirstName: 'Augusta' });
    expect((await team.api.Integration.get(`/event-tickets/${id}`)).body.eventTicket).toMatchObject({ EventTitle: 'Summer Gala', PurchaserName: 'Augusta Lovelace' });
    await team.admin.del(`/events/${event}`);
    const after = await team.api.Integration.get(`/event-tickets?eventId=${event}`);
    expect(after.body.eventTickets.map((x: { EventTitle: string }) => x.EventTitle)).toEqual(['Summer Gala']);
  });

  it('lists across all events or one, by purchaser, paid in full, purchase dates and amounts inclusive; newest purchase first; paged', async () => {
    const team = await t.team();
    const other = await t.team();
    const { event: e1, buyer: b1 } = await setup(team);
    const e2 = (await team.api.Integration.post('/events', { EventTitle: 'Auction' })).body.event.PkEvent;
    const b2 = (await team.api.Integration.post('/constituents', { FirstName: 'Bo' })).body.constituent.PkConstituent;
    const mk = async (FkEvent: number, FkConstituent: number, GrossAmount: number, PurchaseDate: string, IsPaidInFull = true) => {
      const r = await sale(team, { FkEvent, FkConstituent, GrossAmount, PurchaseDate, IsPaidInFull });
      expect(r.status, r.raw).toBe(201);
      return r.body.eventTicket.PkEventTicket as number;
    };
    const s1 = await mk(e1, b1, 10, '2026-03-01T00:00:00');
    const s2 = await mk(e1, b2, 20, '2026-03-02T23:59:59', false);
    const s3 = await mk(e2, b1, 30, '2026-03-03T12:00:00');
    const s4 = await mk(e2, b2, 40, '2026-03-02T08:00:00');
    const o = await setup(other);
    await sale(other, { FkEvent: o.event, FkConstituent: o.buyer, GrossAmount: 10, PurchaseDate: '2026-03-02T10:00:00' });
    const q = async (s: string) => tids(await team.api.Integration.get(`/event-tickets${s}`));
    expect(await q('')).toEqual([s3, s2, s4, s1]);
    expect(await q(`?eventId=${e1}`)).toEqual([s2, s1]);
    expect(await q(`?constituentId=${b1}`)).toEqual([s3, s1]);
    expect(await q(`?eventId=${e2}&constituentId=${b1}`)).toEqual([s3]);
    expect(await q('?isPaidInFull=false')).toEqual([s2]);
    expect(await q('?isPaidInFull=true')).toEqual([s3, s4, s1]);
    expect(await q('?purchasedFrom=2026-03-02&purchasedTo=2026-03-02')).toEqual([s2, s4]);
    expect(await q('?purchasedTo=2026-03-01')).toEqual([s1]);
    expect(await q('?minAmount=20&maxAmount=30')).toEqual([s3, s2]);
    expect(await q('?minAmount=20.5')).toEqual([s3, s4]);
    expect(await q(`?eventId=${o.event}`)).toEqual([]);
    const p = await team.api.Integration.get('/event-tickets?page=2&pageSize=3');
    expect(p.body).toMatchObject({ page: 2, pageSize: 3, total: 4 });
    expect(tids(p)).toEqual([s1]);
    for (const [s, field] of [['purchasedFrom=2026-13-01', 'purchasedFrom'], ['purchasedTo=x', 'purchasedTo'], ['minAmount=abc', 'minAmount'], ['isPaidInFull=maybe', 'isPaidInFull'], ['pageSize=500', 'pageSize']]) {
      const r = await team.api.Integration.get(`/event-tickets?${s}`);
      expect([r.status, r.body.error.code, r.body.error.field], s).toEqual([400, 'invalid_field', field]);
    }
  });

  it("is 404 for another team's sale", async () => {
    const team = await t.team();
    const other = await t.team();
    const { event, buyer } = await setup(team);
    const id = (await sale(team, { FkEvent: event, FkConstituent: buyer, GrossAmount: 1 })).body.eventTicket.PkEventTicket;
    expect((await other.api.Integration.get(`/event-tickets/${id}`)).status).toBe(404);
    expect((await team.api.Integration.get('/event-tickets/999999')).body.error.code).toBe('not_found');
  });
});

describe('rebuilding the event and ticket read models from the log', () => {
  it('gives the same documents, even when every event is delivered twice', async () => {
    const team = await t.team();
    const { event, buyer } = await setup(team);
    const district = (await team.admin.post('/lookups/districts', { name: 'D1' })).body.id;
    await team.admin.patch(`/events/${event}`, { FkDistrict: district, FkChapter: 4, ChapterName: 'North' });
    await sale(team, { FkEvent: event, FkConstituent: buyer, GrossAmount: 12.5, MerchantFees: 0.5 });
    await team.api.Integration.patch(`/events/${event}`, { EventTitle: 'Renamed Gala' });
    await team.api.Integration.patch(`/constituents/${buyer}`, { LastName: 'King' });
    const gone = (await team.api.Integration.post('/events', { EventTitle: 'Gone' })).body.event.PkEvent;
    await team.admin.del(`/events/${gone}`);

    const log = t.runtime.services.log;
    const projectors: Projector[] = [constituentsProjection, lookupsProjection, eventsProjection, eventTicketsProjector(log)];
    const rebuilt = new MemoryReadStore();
    for (const p of projectors) for (const c of p.collections) await rebuilt.defineCollection(c);
    const head = (await log.head())!;
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const sub = log.subscribe(null, async (e: RecordedEvent) => {
      for (let twice = 0; twice < 2; twice++) for (const p of projectors) await p.apply(fromLog(e), rebuilt);
      if (e.position.commit === head.commit && e.position.prepare === head.prepare) done();
    });
    await finished;
    await sub.stop();

    const live = t.runtime.services.store;
    for (const collection of [EVENTS, EVENT_TICKETS]) {
      const q = { collection, filter: eq('FkTeam', team.id) };
      const want = (await live.find(q)).items;
      expect(want.length).toBeGreaterThan(0);
      expect((await rebuilt.find(q)).items).toEqual(want);
    }
    expect((await rebuilt.get(EVENT_TICKETS, (await live.find({ collection: EVENT_TICKETS, filter: eq('FkTeam', team.id) })).items[0].PkEventTicket as number))).toMatchObject({
      EventTitle: 'Renamed Gala', PurchaserName: 'Ada King', NetRevenue: 12,
    });
  });
});

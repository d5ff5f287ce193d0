import { RESOURCES } from '../domain/resources.js';
import { netRevenue, TICKET_READ_FIELDS } from '../domain/event-ticket/rules.js';
import { inCategory } from '../domain/events.js';
import { unknownEvent } from '../domain/shared/events.js';
import type { Values } from '../domain/shared/fields.js';
import { CONSTITUENTS } from './constituents.js';
import { EVENTS } from './events.js';
import { copiedChanges, recordProjection } from './records.js';
import type { Projector } from './engine/projector.js';
import { and, eq, type Filter, gte, lte, type Query, type SortKey } from './store/port.js';

export const EVENT_TICKETS = 'eventTickets';

/** Ticket sales list newest purchase first, then id descending. */
const SALE_ORDER: SortKey[] = [
  { field: 'PurchaseDate', dir: 'desc' },
  { field: 'PkEventTicket', dir: 'desc' },
];

const sales = recordProjection({
  category: RESOURCES.eventTicket.category,
  version: 1,
  collection: {
    name: EVENT_TICKETS,
    idField: RESOURCES.eventTicket.idField,
    indexes: [['FkTeam'], ['FkEvent'], ['FkConstituent']],
    sorts: [{ where: ['FkTeam'], sort: SALE_ORDER }],
  },
  fields: TICKET_READ_FIELDS,
  // Names are read from the linked records; a deleted one leaves the name the sale had.
  derive: async (doc, store) => {
    const event = await store.get<Values>(EVENTS, doc.FkEvent as number);
    const buyer = await store.get<Values>(CONSTITUENTS, doc.FkConstituent as number);
    return {
      EventTitle: (event?.EventTitle as string | undefined) ?? (doc.EventTitle as string | null) ?? null,
      PurchaserName: (buyer?.ConstituentName as string | undefined) ?? (doc.PurchaserName as string | null) ?? null,
      NetRevenue: netRevenue(doc.GrossAmount as number, (doc.MerchantFees as number) ?? 0),
    };
  },
  change(e, _current, docs) {
    switch (e.type) {
      case 'EventTicketCreated':
        return docs.created(e.data.fields);
      default:
        return unknownEvent(e.type, null);
    }
  },
});

/**
 * The ticket-sale read model, which also follows later renames of the linked event and
 * purchaser. Replays apply renames in log order, so the last name wins as it did live.
 */
export const eventTicketsProjection: Projector<'event_ticket' | 'event' | 'constituent'> = {
  name: EVENT_TICKETS,
  version: sales.version,
  collections: sales.collections,
  categories: ['event_ticket', 'event', 'constituent'],
  eventTypes: { event: ['EventUpdated'], constituent: ['ConstituentUpdated', 'ConstituentErased'] },
  async apply(event, store) {
    if (inCategory(event, 'event_ticket')) return sales.apply(event, store);
    if (event.type === 'EventUpdated') {
      const title = copiedChanges(event.data.changes, { EventTitle: 'EventTitle' });
      if (title) await store.updateWhere(EVENT_TICKETS, eq('FkEvent', event.data.id), title);
    } else if (event.type === 'ConstituentUpdated') {
      const purchaser = copiedChanges(event.data.changes, { ConstituentName: 'PurchaserName' });
      if (purchaser) await store.updateWhere(EVENT_TICKETS, eq('FkConstituent', event.data.id), purchaser);
    } else if (event.type === 'ConstituentErased') {
      await store.updateWhere(EVENT_TICKETS, eq('FkConstituent', event.data.id), { PurchaserName: null });
    }
  },
};

export interface TicketFilters {
  eventId?: number;
  constituentId?: number;
  isPaidInFull?: boolean;
  purchasedFrom?: string;
  purchasedTo?: string;
  minAmount?: number;
  maxAmount?: number;
}

/** GET /event-tickets (decisions.md 6): across all events or one; newest PurchaseDate first. */
export function ticketSearch(team: number, f: TicketFilters, page: { page: number; pageSize: number }): Query {
  const filters: Array<Filter | undefined> = [
    f.eventId === undefined ? undefined : eq('FkEvent', f.eventId),
    f.constituentId === undefined ? undefined : eq('FkConstituent', f.constituentId),
    f.isPaidInFull === undefined ? undefined : eq('IsPaidInFull', f.isPaidInFull),
    // PurchaseDate is a UTC date-time; the date bounds take in their whole day.
    f.purchasedFrom === undefined ? undefined : gte('PurchaseDate', `${f.purchasedFrom}T00:00:00`),
    f.purchasedTo === undefined ? undefined : lte('PurchaseDate', `${f.purchasedTo}T23:59:59`),
    f.minAmount === undefined ? undefined : gte('GrossAmount', f.minAmount),
    f.maxAmount === undefined ? undefined : lte('GrossAmount', f.maxAmount),
  ];
  return {
    collection: EVENT_TICKETS,
    filter: and(eq('FkTeam', team), ...filters),
    sort: SALE_ORDER,
    page,
  };
}

import { RESOURCES } from '../domain/resources.js';
import { constituentEvolver, constituentStream, isErasedEvent } from '../domain/constituent/events.js';
import { eventEvolver, eventStream } from '../domain/event/events.js';
import { netRevenue, TICKET_READ_FIELDS } from '../domain/event-ticket/rules.js';
import { inCategory } from '../domain/events.js';
import { comparePositions, type Evolver, type Position, type RecordedEvent, unknownEvent } from '../domain/shared/events.js';
import type { Values } from '../domain/shared/fields.js';
import type { RecordState } from '../domain/shared/record.js';
import type { EventLog } from '../eventlog/port.js';
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

/**
 * What the ticket sales read of the log (the log port's reads, or a projector thread's own reader
 * of the log file): the stream of a linked event or purchaser whose document is gone.
 */
export type LinkedStreams = Pick<EventLog, 'readStream' | 'readStreamUntil'>;

/** A record's fields as its stream stood at `at`: `events` folded up to it. */
function fieldsAt<S extends RecordState>(events: readonly RecordedEvent[], evolver: Evolver<S, never>, at: Position): Values {
  let s = evolver.initial();
  for (const e of events) {
    if (comparePositions(e.position, at) > 0) break;
    s = evolver.evolve(s, e as never);
  }
  return s.fields;
}

/** The event's title as its stream stood at `at`. */
async function titleAt(log: LinkedStreams, id: number, at: Position): Promise<string | null> {
  const stream = eventStream(id);
  const events = log.readStreamUntil ? await log.readStreamUntil(stream, at) : await log.readStream(stream);
  return (fieldsAt(events, eventEvolver, at).EventTitle as string | null | undefined) ?? null;
}

/**
 * The purchaser's name as their stream stood at `at`; null for an erased purchaser (decisions.md
 * §17), whenever the erasure came. The whole stream is read for it: the erasure is later than the
 * sale, and a build may apply the sale before the erasure has rewritten the person's events (the
 * erasure is appended first), so the events up to the sale may still hold the name.
 */
async function purchaserAt(log: LinkedStreams, id: number, at: Position): Promise<string | null> {
  const events = await log.readStream(constituentStream(id));
  if (events.some(isErasedEvent)) return null;
  return (fieldsAt(events, constituentEvolver, at).ConstituentName as string | null | undefined) ?? null;
}

/**
 * The ticket-sale read model, which also follows later renames of the linked event and
 * purchaser. Replays apply renames in log order, so the last name wins as it did live.
 *
 * A sale shows the names its event and purchaser had at the sale's position, as live, whether it
 * is applied with the other read models or alone (its version raised: only this read model is
 * replayed, beside the events and constituents as they stand at the log's head; a new version
 * built beside the others on a shared store; a prepare of this read model alone). The names come
 * from their documents (no log read, as live); a record deleted or erased since has none, and its
 * stream is read from `log` up to the sale instead.
 */
export function eventTicketsProjector(log: LinkedStreams): Projector<'event_ticket' | 'event' | 'constituent'> {
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
    derive: async (doc, store, e) => {
      const event = await store.get<Values>(EVENTS, doc.FkEvent as number);
      const buyer = await store.get<Values>(CONSTITUENTS, doc.FkConstituent as number);
      return {
        EventTitle: event
          ? ((event.EventTitle as string | undefined) ?? (doc.EventTitle as string | null) ?? null)
          : await titleAt(log, doc.FkEvent as number, e.position),
        PurchaserName: buyer
          ? ((buyer.ConstituentName as string | undefined) ?? (doc.PurchaserName as string | null) ?? null)
          : await purchaserAt(log, doc.FkConstituent as number, e.position),
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

  return {
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
}

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

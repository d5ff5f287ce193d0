import { Type } from '@sinclair/typebox';
import { TICKET_FIELDS } from '../../domain/event-ticket/rules.js';
import { ListOf, Nullable, One, Paging, Query } from './common.js';
import { readRecord, writeBody } from '../../validation/fields.js';

export const EventTicket = Type.Object(
  readRecord('PkEventTicket', TICKET_FIELDS, {
    EventTitle: Nullable(Type.String({ description: "Read-only: the event's title" })),
    PurchaserName: Nullable(Type.String({ description: "Read-only: the purchaser's ConstituentName" })),
    NetRevenue: Type.Number({ description: 'Read-only: GrossAmount - MerchantFees, 2 decimals' }),
  }).properties,
  { $id: 'EventTicket' },
);
export const EventTicketRef = Type.Ref(EventTicket);

/** The application's record of a sale (decisions.md 9): every field but the id, NetRevenue and the names. */
export const EventTicketBody = writeBody(TICKET_FIELDS, ['FkEvent', 'FkConstituent', 'GrossAmount']);

const amount = (description: string) => Type.Optional(Type.Number({ minimum: 0, description }));

export const EventTicketListQuery = Query({
  eventId: Type.Optional(Type.Integer({ minimum: 1, description: "One event's sales; without it, sales across all events" })),
  constituentId: Type.Optional(Type.Integer({ minimum: 1, description: "One purchaser's sales" })),
  isPaidInFull: Type.Optional(Type.Boolean()),
  purchasedFrom: Type.Optional(Type.String({ description: 'YYYY-MM-DD: PurchaseDate on or after this day (UTC)' })),
  purchasedTo: Type.Optional(Type.String({ description: 'YYYY-MM-DD: PurchaseDate on or before this day (UTC)' })),
  minAmount: amount('GrossAmount at least this'),
  maxAmount: amount('GrossAmount at most this'),
  ...Paging,
});

export const EventTicketCreated = Type.Object({ eventTicket: EventTicketRef });
export const EventTicketOne = One('eventTicket', EventTicketRef);
export const EventTicketList = ListOf('eventTickets', EventTicketRef);

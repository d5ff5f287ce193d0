import { type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Ticket sales, on stream `event_ticket-<id>`: EventTicketCreated {id, fields}. A sale is
 * recorded by the application (checkout, hand entry) and read-only in the public API.
 */
export const EVENT_TICKET = 'EventTicket';
export const EVENT_TICKET_CATEGORY = 'event_ticket';
export type EventTicketEvent = Extract<RecordEvents<typeof EVENT_TICKET>, { type: 'EventTicketCreated' }>;
export type EventTicketState = RecordState;

export function evolveEventTicket(s: EventTicketState, e: Folded<EventTicketEvent>): EventTicketState {
  switch (e.type) {
    case 'EventTicketCreated':
      return recordCreated(s, e);
    default:
      return unknownEvent(e.type, s);
  }
}

export const eventTicketEvolver: Evolver<EventTicketState, EventTicketEvent> = { initial: emptyRecord, evolve: evolveEventTicket };
export const eventTicketStream = (id: number) => `${EVENT_TICKET_CATEGORY}-${id}`;

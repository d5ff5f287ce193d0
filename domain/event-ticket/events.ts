import type { Evolver } from '../shared/events.js';
import { type RecordState, recordEvolver } from '../shared/record.js';

/**
 * Ticket sales, on stream `event_ticket-<id>`: EventTicketCreated {id, fields}. A sale is
 * recorded by the application (checkout, hand entry) and read-only in the public API.
 */
export const EVENT_TICKET = 'EventTicket';
export const EVENT_TICKET_CATEGORY = 'event_ticket';
export type EventTicketState = RecordState;
export const eventTicketEvolver: Evolver<EventTicketState> = recordEvolver(EVENT_TICKET);
export const eventTicketStream = (id: number) => `${EVENT_TICKET_CATEGORY}-${id}`;

import { normaliseFields, type Values } from '../shared/fields.js';
import { formatDateTime } from '../shared/values.js';
import { type EventTicketState, type EventTicketEvent } from './events.js';
import { completeTicket, TICKET_FIELDS, TICKET_READ_ONLY } from './rules.js';

export interface RecordTicketSale {
  id: number;
  team: number;
  body: Values;
  /** The default PurchaseDate. */
  now: Date;
}

/** Validates a sale without deciding it: a failed create must write nothing, not even an id. */
export function validateTicketSale(body: Values, now: Date): Values {
  return completeTicket(normaliseFields(TICKET_FIELDS, body, TICKET_READ_ONLY), formatDateTime(now));
}

export function decideRecordTicketSale(cmd: RecordTicketSale, state: EventTicketState): EventTicketEvent[] {
  if (state.exists) throw new Error(`event ticket ${cmd.id} already exists`);
  return [{ type: 'EventTicketCreated', data: { id: cmd.id, fields: validateTicketSale(cmd.body, cmd.now) } }];
}

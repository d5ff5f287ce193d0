import { decideRecordTicketSale, validateTicketSale } from '../domain/event-ticket/decide.js';
import { eventTicketEvolver, eventTicketStream } from '../domain/event-ticket/events.js';
import type { Values } from '../domain/shared/fields.js';
import { CONSTITUENTS } from '../projections/constituents.js';
import { DONATIONS } from '../projections/donations.js';
import { EVENTS } from '../projections/events.js';
import { assertTeamRecord } from '../projections/read.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

/** Records the sale may link to; each must be the team's own and not deleted. */
const TICKET_LINKS: Array<[field: string, collection: string, what: string]> = [
  ['FkEvent', EVENTS, 'an event'],
  ['FkConstituent', CONSTITUENTS, 'a constituent'],
  ['FkDonation', DONATIONS, 'a donation'],
];

/** POST /admin/v1/teams/:teamId/event-tickets: validated in full, links included, before an id is taken. */
export async function recordTicketSale(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  const fields = validateTicketSale(body, ctx.now);
  for (const [field, collection, what] of TICKET_LINKS) await assertTeamRecord(deps.store, collection, ctx.team, fields[field], field, what);
  const id = await deps.ids.next('event_ticket');
  const r = await handle(deps.log, eventTicketStream(id), eventTicketEvolver, ctx, (s) => decideRecordTicketSale({ id, team: ctx.team, body, now: ctx.now }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return id;
}

import { assertTeamRecord } from '../projections/read.js';
import { donationEvolver, donationStream } from '../domain/donation/events.js';
import { decideFlag, decideRecordDonation, decideRefund, decideUpdateDonation, refundFields, validateDonation } from '../domain/donation/decide.js';
import { checkAmount, DONATION_FIELDS, DONATION_READ_ONLY } from '../domain/donation/rules.js';
import { normaliseFields, type Values } from '../domain/shared/fields.js';
import { assertWritable } from '../domain/shared/record.js';
import { CONSTITUENTS } from '../projections/constituents.js';
import { handle } from './aggregate.js';
import { load } from '../eventlog/load.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
/** The donor must be a constituent of the same team. */
export const checkDonor = (deps: CommandDeps, team: number, id: unknown) =>
  assertTeamRecord(deps.store, CONSTITUENTS, team, id, 'FkConstituent', 'a constituent');

export async function recordDonation(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  const fields = validateDonation(body, ctx.now);
  await checkDonor(deps, ctx.team, fields.FkConstituent);
  const id = await deps.ids.next('donation');
  const r = await handle(deps.log, donationStream(id), donationEvolver, ctx, (s) => decideRecordDonation({ id, fields }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return id;
}

export async function updateDonation(deps: CommandDeps, ctx: WriteContext, id: number, body: Values): Promise<void> {
  // The answers in the usual order: a bad field, then a missing or locked donation, then a donor
  // that is not the team's (the decision checks the first two again when it appends).
  const sent = normaliseFields(DONATION_FIELDS, body, DONATION_READ_ONLY);
  assertWritable((await load(deps.log, donationStream(id), donationEvolver)).state, ctx.team, 'donation', id);
  await checkDonor(deps, ctx.team, sent.FkConstituent ?? undefined);
  const r = await handle(deps.log, donationStream(id), donationEvolver, ctx, (s) => decideUpdateDonation({ id, team: ctx.team, body }, s));
  await deps.settle(r.position, ctx);
}

export async function flagDonation(deps: CommandDeps, ctx: WriteContext, id: number, flag: 'Receipted' | 'Thanked'): Promise<void> {
  const r = await handle(deps.log, donationStream(id), donationEvolver, ctx, (s) => decideFlag({ id, team: ctx.team, flag }, s));
  await deps.settle(r.position, ctx);
}

/**
 * A refund is recorded on the refunded donation first (its expected revision serialises
 * concurrent refunds, so together they never exceed the gift), then as its own donation.
 */
export async function refundDonation(deps: CommandDeps, ctx: WriteContext, id: number, amount: unknown): Promise<number> {
  checkAmount('Amount', amount); // before an id is taken
  const refundId = await deps.ids.next('donation');
  const original = await handle(deps.log, donationStream(id), donationEvolver, ctx, (s) => decideRefund({ id, team: ctx.team, refundId, amount }, s));
  const fields = refundFields(original.state, original.events[0].data.Amount as number, ctx.now);
  const r = await handle(deps.log, donationStream(refundId), donationEvolver, ctx, (s) => decideRecordDonation({ id: refundId, fields }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return refundId;
}

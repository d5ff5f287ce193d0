import { invalidField } from '../shared/errors.js';
import { changedFields, normaliseFields, type Values } from '../shared/fields.js';
import { assertWritable } from '../shared/record.js';
import { todayUtc } from '../shared/values.js';
import { cents, DONATION, type DonationState, type DonationEvent } from './events.js';
import { checkAmount, completeDonation, DONATION_FIELDS, DONATION_READ_ONLY } from './rules.js';

/** Validates a create before an id is taken: a failed create writes nothing. */
export function validateDonation(body: Values, now: Date): Values {
  const sent = normaliseFields(DONATION_FIELDS, body, DONATION_READ_ONLY);
  const fields = completeDonation(sent, true);
  return { GiftDate: todayUtc(now), Purpose: null, Source: null, ...fields, IsReceipted: false, IsThanked: false, RefundAmount: null, FkRefundedDonation: null };
}

export function decideRecordDonation(cmd: { id: number; fields: Values }, s: DonationState): DonationEvent[] {
  if (s.exists) throw new Error(`donation ${cmd.id} already exists`);
  return [{ type: 'DonationCreated', data: { id: cmd.id, fields: cmd.fields } }];
}

export function decideUpdateDonation(cmd: { id: number; team: number; body: Values }, s: DonationState): DonationEvent[] {
  const sent = completeDonation(normaliseFields(DONATION_FIELDS, cmd.body, DONATION_READ_ONLY), false);
  assertWritable(s, cmd.team, 'donation', cmd.id);
  if (s.fields.FkRefundedDonation != null && sent.Amount !== undefined)
    throw invalidField('Amount', 'The amount of a refund cannot change; issue another refund instead.');
  // Refunds never exceed the gift: they are checked against it when issued, and so is a later change of it.
  if (typeof sent.Amount === 'number' && sent.Amount < s.refunded)
    throw invalidField('Amount', `Amount ${sent.Amount} is less than the ${s.refunded} already refunded on donation ${cmd.id}.`);
  const changes = changedFields(s.fields, sent);
  return Object.keys(changes).length ? [{ type: 'DonationUpdated', data: { id: cmd.id, changes } }] : [];
}

/** Receipt and thank-you flags turn on once; doing it again records nothing. */
export function decideFlag(cmd: { id: number; team: number; flag: 'Receipted' | 'Thanked' }, s: DonationState): DonationEvent[] {
  assertWritable(s, cmd.team, 'donation', cmd.id);
  if (s.fields[`Is${cmd.flag}`] === true) return [];
  return [{ type: `${DONATION}${cmd.flag}`, data: { id: cmd.id } }];
}

/** The refund is checked against what is left of the gift; the refund donation is written next. */
export function decideRefund(cmd: { id: number; team: number; refundId: number; amount: unknown }, s: DonationState): DonationEvent[] {
  const amount = checkAmount('Amount', cmd.amount);
  // The refund is recorded on the original (DonationRefunded): a write, which a locked donation refuses.
  assertWritable(s, cmd.team, 'donation', cmd.id);
  if (s.fields.FkRefundedDonation != null) throw invalidField('Amount', `Donation ${cmd.id} is itself a refund; refund the original donation.`);
  const left = cents((s.fields.Amount as number) - s.refunded);
  if (amount > left) throw invalidField('Amount', `Amount ${amount} is more than the ${left} left to refund on donation ${cmd.id}.`);
  return [{ type: 'DonationRefunded', data: { id: cmd.id, refundId: cmd.refundId, Amount: amount } }];
}

export function refundFields(original: DonationState, amount: number, now: Date): Values {
  return {
    FkConstituent: original.fields.FkConstituent,
    Amount: -amount,
    GiftDate: todayUtc(now),
    Purpose: original.fields.Purpose ?? null,
    Source: 'Refund',
    IsReceipted: false,
    IsThanked: false,
    RefundAmount: amount,
    FkRefundedDonation: original.id,
  };
}

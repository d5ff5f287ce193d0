import { invalidField, missingField, notFound } from '../shared/errors.js';
import { normaliseFields, type FieldSpec, type Values } from '../shared/fields.js';
import { assertFound } from '../shared/record.js';
import { todayUtc } from '../shared/values.js';
import { checkAmount } from '../donation/rules.js';
import { type RecurringGiftState, type RecurringGiftEvent } from './events.js';

export const FREQUENCIES = ['weekly', 'monthly', 'quarterly', 'annually'] as const;

export const RECURRING_GIFT_FIELDS: FieldSpec = {
  FkConstituent: { kind: 'ref', nullable: false, description: 'The donor: a constituent of this team' },
  Amount: { kind: 'number', min: 0, exclusiveMin: true, nullable: false, description: 'Dollars per installment, more than 0' },
  Frequency: { kind: 'string', nullable: false, description: FREQUENCIES.join(', ') },
  StartDate: { kind: 'date', nullable: false, description: 'Defaults to today (UTC)' },
};

export const RECURRING_GIFT_PUBLIC = [...Object.keys(RECURRING_GIFT_FIELDS), 'CanceledDate'];

export function validateRecurringGift(body: Values, now: Date): Values {
  const sent = normaliseFields(RECURRING_GIFT_FIELDS, body, ['PkRecurringGift', 'FkTeam', 'CanceledDate', 'DateCreated', 'DateLastModified']);
  if (sent.FkConstituent === undefined) throw missingField('FkConstituent', 'FkConstituent (the donor) is required.');
  if (sent.Amount === undefined) throw missingField('Amount');
  if (sent.Frequency === undefined) throw missingField('Frequency', `Frequency is required: one of ${FREQUENCIES.join(', ')}.`);
  if (!(FREQUENCIES as readonly string[]).includes(sent.Frequency as string))
    throw invalidField('Frequency', `Frequency must be one of ${FREQUENCIES.join(', ')}.`);
  return { StartDate: todayUtc(now), ...sent, Amount: checkAmount('Amount', sent.Amount), CanceledDate: null };
}

export function decideStartRecurringGift(cmd: { id: number; fields: Values }, s: RecurringGiftState): RecurringGiftEvent[] {
  if (s.exists) throw new Error(`recurring gift ${cmd.id} already exists`);
  return [{ type: 'RecurringGiftCreated', data: { id: cmd.id, fields: cmd.fields } }];
}

/** A canceled schedule is gone for the caller: canceling it again is 404. */
export function decideCancelRecurringGift(cmd: { id: number; team: number }, s: RecurringGiftState): RecurringGiftEvent[] {
  assertFound(s, cmd.team, 'recurring gift', cmd.id);
  if (s.canceledAt) throw notFound('recurring gift', cmd.id);
  return [{ type: 'RecurringGiftCanceled', data: { id: cmd.id } }];
}

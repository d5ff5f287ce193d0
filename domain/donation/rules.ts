import { invalidField, missingField } from '../shared/errors.js';
import type { FieldSpec, Values } from '../shared/fields.js';

/** Writable donation fields (decisions.md 6). Receipt and thank-you flags move only through their actions. */
export const DONATION_FIELDS: FieldSpec = {
  FkConstituent: { kind: 'ref', nullable: false, description: 'The donor: a constituent of this team' },
  Amount: { kind: 'number', min: 0, exclusiveMin: true, nullable: false, description: 'Dollars, more than 0, at most 2 decimals' },
  GiftDate: { kind: 'date', nullable: false, description: 'Defaults to today (UTC)' },
  Purpose: { kind: 'string', max: 150, description: 'Designated purpose (fund, campaign)' },
  Source: { kind: 'string', max: 100, description: 'Online form, payment processor, import, hand entry, ...' },
};

/** Read-only on donation reads. */
export const DONATION_READ_ONLY = ['PkDonation', 'FkTeam', 'IsReceipted', 'IsThanked', 'RefundAmount', 'FkRefundedDonation', 'DateCreated', 'DateLastModified'] as const;

/** Every public field of a donation read and payload. */
export const DONATION_PUBLIC = [...Object.keys(DONATION_FIELDS), 'IsReceipted', 'IsThanked', 'RefundAmount', 'FkRefundedDonation'];

/** A money amount: more than 0 and whole cents. */
export function checkAmount(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) throw invalidField(field, `${field} must be a number of dollars greater than 0.`);
  if (Math.abs(Math.round(v * 100) - v * 100) > 1e-6) throw invalidField(field, `${field} must have at most 2 decimals (whole cents).`);
  if (v > 1e10) throw invalidField(field, `${field} is too large.`);
  return Math.round(v * 100) / 100;
}

export function completeDonation(fields: Values, creating: boolean): Values {
  if (creating && fields.FkConstituent === undefined) throw missingField('FkConstituent', 'FkConstituent (the donor) is required.');
  if (creating && fields.Amount === undefined) throw missingField('Amount');
  const out = { ...fields };
  if (out.Amount !== undefined) out.Amount = checkAmount('Amount', out.Amount);
  return out;
}

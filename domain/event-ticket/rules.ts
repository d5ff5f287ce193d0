import { invalidField, missingField } from '../shared/errors.js';
import type { FieldSpec, Values } from '../shared/fields.js';

/** A ticket sale as the application records it (decisions.md 6 and 9): all but its id, NetRevenue and names. */
export const TICKET_FIELDS: FieldSpec = {
  FkEvent: { kind: 'ref', nullable: false, description: "Required; one of the team's events" },
  FkConstituent: { kind: 'ref', nullable: false, description: "Required; the purchaser, one of the team's constituents" },
  TicketTypeName: { kind: 'string', max: 150 },
  Quantity: { kind: 'int', min: 1, max: 100_000, nullable: false, description: 'Default 1' },
  GrossAmount: { kind: 'number', min: 0, nullable: false, description: 'Required; dollars paid, whole cents' },
  MerchantFees: { kind: 'number', min: 0, nullable: false, description: 'Dollars, whole cents; default 0' },
  TaxDeductibleAmount: { kind: 'number', min: 0, nullable: false, description: 'Dollars, whole cents; default 0' },
  FkDonation: { kind: 'ref', description: 'The donation the ticket generated, if any' },
  PurchaseDate: { kind: 'datetime', nullable: false, description: 'Default: now' },
  IsPaidInFull: { kind: 'boolean', nullable: false, description: 'Default true' },
};

/** Read-only: the id, the computed net and the names read from the linked records. */
export const TICKET_READ_ONLY = ['PkEventTicket', 'FkTeam', 'NetRevenue', 'EventTitle', 'PurchaserName', 'DateCreated', 'DateLastModified'] as const;

export const TICKET_READ_FIELDS = [...Object.keys(TICKET_FIELDS), 'EventTitle', 'PurchaserName', 'NetRevenue'] as const;

const REQUIRED = ['FkEvent', 'FkConstituent', 'GrossAmount'] as const;
const MONEY = ['GrossAmount', 'MerchantFees', 'TaxDeductibleAmount'] as const;

/** Money is dollars with at most two decimals; a float's representation error is not a third decimal. */
const wholeCents = (v: number) => Math.abs(v * 100 - Math.round(v * 100)) < 1e-6;
export const roundCents = (v: number) => Math.round(v * 100) / 100;

/** NetRevenue = gross - fees, 2 decimals (decisions.md 6). */
export const netRevenue = (gross: number, fees: number) => roundCents(gross - fees);

/** Required fields, defaults, and the amounts' rules on the sale as it will be recorded. */
export function completeTicket(sent: Values, now: string): Values {
  for (const f of REQUIRED) if (sent[f] === undefined) throw missingField(f, `${f} is required to record a ticket sale.`);
  const out: Values = { Quantity: 1, MerchantFees: 0, TaxDeductibleAmount: 0, IsPaidInFull: true, PurchaseDate: now, ...sent };
  for (const f of MONEY) {
    const v = out[f] as number;
    if (!wholeCents(v)) throw invalidField(f, `${f} must be dollars with at most two decimals (got ${v}).`);
    out[f] = roundCents(v);
  }
  const gross = out.GrossAmount as number;
  if ((out.MerchantFees as number) > gross) throw invalidField('MerchantFees', `MerchantFees ${out.MerchantFees} cannot exceed GrossAmount ${gross}.`);
  if ((out.TaxDeductibleAmount as number) > gross)
    throw invalidField('TaxDeductibleAmount', `TaxDeductibleAmount ${out.TaxDeductibleAmount} cannot exceed GrossAmount ${gross}.`);
  return out;
}

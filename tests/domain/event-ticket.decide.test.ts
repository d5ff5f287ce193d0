import { describe, expect, it } from 'vitest';
import { decideRecordTicketSale } from '../../domain/event-ticket/decide.js';
import { eventTicketEvolver } from '../../domain/event-ticket/events.js';
import { netRevenue } from '../../domain/event-ticket/rules.js';
import { DomainError } from '../../domain/shared/errors.js';

const now = new Date('2026-04-01T12:00:00.000Z');
const record = (body: Record<string, unknown>) => decideRecordTicketSale({ id: 5, team: 1, body, now }, eventTicketEvolver.initial());
const code = (body: Record<string, unknown>) => {
  try {
    record(body);
  } catch (e) {
    return [(e as DomainError).code, (e as DomainError).field];
  }
  return null;
};

describe('recording a ticket sale', () => {
  it('fills the defaults and keeps money in whole cents', () => {
    expect(record({ FkEvent: 1, FkConstituent: 2, GrossAmount: 19.99 })).toEqual([
      {
        type: 'EventTicketCreated',
        data: { id: 5, fields: { FkEvent: 1, FkConstituent: 2, GrossAmount: 19.99, Quantity: 1, MerchantFees: 0, TaxDeductibleAmount: 0, IsPaidInFull: true, PurchaseDate: '2026-04-01T12:00:00' } },
      },
    ]);
  });

  it('refuses missing links, sub-cent amounts and fees or deductions above the gross', () => {
    expect(code({ FkConstituent: 2, GrossAmount: 1 })).toEqual(['missing_field', 'FkEvent']);
    expect(code({ FkEvent: 1, FkConstituent: 2, GrossAmount: 0.001 })).toEqual(['invalid_field', 'GrossAmount']);
    expect(code({ FkEvent: 1, FkConstituent: 2, GrossAmount: 5, MerchantFees: 5.01 })).toEqual(['invalid_field', 'MerchantFees']);
    expect(code({ FkEvent: 1, FkConstituent: 2, GrossAmount: 5, TaxDeductibleAmount: 6 })).toEqual(['invalid_field', 'TaxDeductibleAmount']);
    expect(code({ FkEvent: 1, FkConstituent: 2, GrossAmount: 5, NetRevenue: 5 })).toEqual(['unknown_field', 'NetRevenue']);
  });

  it('computes NetRevenue to two decimals without float noise', () => {
    expect(netRevenue(0.3, 0.1)).toBe(0.2);
    expect(netRevenue(150.1, 4.65)).toBe(145.45);
  });
});

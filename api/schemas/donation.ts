import { Type } from '@sinclair/typebox';
import { DONATION_FIELDS } from '../../domain/donation/rules.js';
import { RECURRING_GIFT_FIELDS } from '../../domain/recurring-gift/decide.js';
import { Body, Nullable } from './common.js';
import { readRecord, writeBody } from '../../validation/fields.js';

export const Donation = readRecord('PkDonation', DONATION_FIELDS, {
  // A refund is a donation of its own whose Amount is the refunded sum, negated (domain/donation/decide.ts refundFields).
  Amount: Nullable(Type.Number({ description: 'Dollars; on a refund, minus RefundAmount' })),
  IsReceipted: Type.Boolean(),
  IsThanked: Type.Boolean(),
  RefundAmount: Nullable(Type.Number({ description: 'On a refund: the amount refunded' })),
  FkRefundedDonation: Nullable(Type.Integer({ description: 'On a refund: the refunded donation' })),
});
export const DonationBody = writeBody(DONATION_FIELDS);
export const RefundBody = Body({ Amount: Type.Number({ description: 'Dollars to refund, at most what is left of the gift' }) });

export const RecurringGift = readRecord('PkRecurringGift', RECURRING_GIFT_FIELDS, { CanceledDate: Nullable(Type.String()) });
export const RecurringGiftBody = writeBody(RECURRING_GIFT_FIELDS);

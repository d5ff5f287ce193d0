import type { Evolver } from '../shared/events.js';
import { emptyRecord, evolveRecord, type RecordEvent, type RecordState } from '../shared/record.js';

/**
 * Donations (decisions.md 6). Events: DonationCreated {id, fields}, DonationUpdated {id, changes},
 * DonationDeleted {id}, DonationReceipted {id}, DonationThanked {id}, and on the refunded
 * donation DonationRefunded {id, refundId, Amount}. A refund is itself a donation whose fields
 * carry RefundAmount and FkRefundedDonation.
 */
export const DONATION = 'Donation';
export const donationStream = (id: number) => `donation-${id}`;

export interface DonationState extends RecordState {
  /** Sum refunded so far, so refunds never exceed the gift. */
  refunded: number;
}

export function evolveDonation(s: DonationState, e: RecordEvent): DonationState {
  switch (e.type) {
    case `${DONATION}Receipted`:
      return { ...s, fields: { ...s.fields, IsReceipted: true }, modifiedAt: e.metadata?.at ?? s.modifiedAt };
    case `${DONATION}Thanked`:
      return { ...s, fields: { ...s.fields, IsThanked: true }, modifiedAt: e.metadata?.at ?? s.modifiedAt };
    case `${DONATION}Refunded`:
      return { ...s, refunded: cents(s.refunded + (e.data.Amount as number)) };
    default:
      return { ...s, ...evolveRecord(DONATION, s, e) };
  }
}

export const cents = (n: number) => Math.round(n * 100) / 100;

export const donationEvolver: Evolver<DonationState> = {
  initial: () => ({ ...emptyRecord(), refunded: 0 }),
  evolve: (s, e) => evolveDonation(s, e as RecordEvent),
};

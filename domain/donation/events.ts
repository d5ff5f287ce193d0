import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, recordDeleted, recordFieldsSet, recordLocked, recordUpdated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Donations (decisions.md 6). Events: DonationCreated {id, fields}, DonationUpdated {id, changes},
 * DonationDeleted {id}, DonationReceipted {id}, DonationThanked {id}, and on the refunded
 * donation DonationRefunded {id, refundId, Amount}. A refund is itself a donation whose fields
 * carry RefundAmount and FkRefundedDonation.
 */
export const DONATION = 'Donation';
/** The stream category, as domain/resources.ts registers it: record 12's stream is `donation-12`. */
export const DONATION_CATEGORY = 'donation';
export const donationStream = (id: number) => `${DONATION_CATEGORY}-${id}`;

export type DonationEvent =
  | RecordEvents<typeof DONATION>
  | DomainEvent<'DonationReceipted' | 'DonationThanked', { id: number }>
  | DomainEvent<'DonationRefunded', { id: number; refundId: number; Amount: number }>;

export interface DonationState extends RecordState {
  /** Sum refunded so far, so refunds never exceed the gift. */
  refunded: number;
}

const RECEIPTED = { IsReceipted: true };
const THANKED = { IsThanked: true };

export function evolveDonation(s: DonationState, e: Folded<DonationEvent>): DonationState {
  switch (e.type) {
    case 'DonationCreated':
      return recordCreated(s, e);
    case 'DonationUpdated':
      return recordUpdated(s, e);
    case 'DonationLocked':
      return recordLocked(s, true);
    case 'DonationUnlocked':
      return recordLocked(s, false);
    case 'DonationDeleted':
      return recordDeleted(s, e);
    case 'DonationReceipted':
      return recordFieldsSet(s, RECEIPTED, e);
    case 'DonationThanked':
      return recordFieldsSet(s, THANKED, e);
    case 'DonationRefunded':
      return { ...s, refunded: cents(s.refunded + e.data.Amount) };
    default:
      return unknownEvent(e, s);
  }
}

export const cents = (n: number) => Math.round(n * 100) / 100;

export const donationEvolver: Evolver<DonationState, DonationEvent> = {
  initial: () => ({ ...emptyRecord(), refunded: 0 }),
  evolve: evolveDonation,
};

import { unknownEvent } from '../shared/events.js';
import { changedRecord, deletedRecord, type Fires, fires, NONE, recordWebhooks } from '../shared/webhooks.js';
import type { DonationEvent, DonationState } from './events.js';

const DONATION = recordWebhooks('donation.created', 'donation.updated', 'donation.deleted');
const REFUNDED = fires('donation.refunded');
const RECEIPTED = fires('donation.receipted');
const THANKED = fires('donation.thanked');

/**
 * The common record rule (domain/shared/webhooks.ts), except: a refund is a donation of its own
 * whose creation fires donation.refunded (the refunded gift's DonationRefunded fires nothing);
 * receipting and thanking fire their own types, once.
 */
export function donationWebhooks(e: DonationEvent, before: DonationState, after: DonationState): Fires {
  switch (e.type) {
    case 'DonationCreated':
      return after.fields.FkRefundedDonation != null ? REFUNDED : DONATION.created;
    case 'DonationDeleted':
      return deletedRecord(DONATION, before);
    case 'DonationUpdated':
    case 'DonationLocked':
    case 'DonationUnlocked':
      return changedRecord(DONATION, before, after);
    case 'DonationReceipted':
      return before.fields.IsReceipted === true ? NONE : RECEIPTED;
    case 'DonationThanked':
      return before.fields.IsThanked === true ? NONE : THANKED;
    case 'DonationRefunded':
      return NONE;
    default:
      return unknownEvent(e, NONE);
  }
}

import { RESOURCES } from '../domain/resources.js';
import { DONATION_PUBLIC } from '../domain/donation/rules.js';
import { RECURRING_GIFT_PUBLIC } from '../domain/recurring-gift/decide.js';
import { unknownEvent } from '../domain/shared/events.js';
import { utcSecondsOf } from '../domain/shared/values.js';
import { recordProjection, REMOVED } from './records.js';

const RECEIPTED = { IsReceipted: true };
const THANKED = { IsThanked: true };

export const DONATIONS = 'donations';
export const RECURRING_GIFTS = 'recurringGifts';

export const donationsProjection = recordProjection({
  category: RESOURCES.donation.category,
  version: 1,
  collection: { name: DONATIONS, idField: RESOURCES.donation.idField, indexes: [['FkTeam'], ['FkTeam', 'FkConstituent']] },
  fields: DONATION_PUBLIC,
  change(e, current, docs) {
    switch (e.type) {
      case 'DonationCreated':
        return docs.created(e.data.fields);
      case 'DonationUpdated':
        return docs.updated(current, e.data.changes);
      case 'DonationReceipted':
        return docs.updated(current, RECEIPTED);
      case 'DonationThanked':
        return docs.updated(current, THANKED);
      case 'DonationLocked':
      case 'DonationUnlocked':
      // DonationRefunded changes nothing public on the refunded gift: the refund is its own donation.
      case 'DonationRefunded':
        return null;
      case 'DonationDeleted':
        return REMOVED;
      default:
        return unknownEvent(e, null);
    }
  },
});

export const recurringGiftsProjection = recordProjection({
  category: RESOURCES.recurringGift.category,
  version: 1,
  collection: { name: RECURRING_GIFTS, idField: RESOURCES.recurringGift.idField, indexes: [['FkTeam']] },
  fields: RECURRING_GIFT_PUBLIC,
  change(e, current, docs) {
    switch (e.type) {
      case 'RecurringGiftCreated':
        return docs.created(e.data.fields);
      case 'RecurringGiftCanceled':
        return docs.updated(current, { CanceledDate: utcSecondsOf(e.metadata.at).slice(0, 10) });
      default:
        return unknownEvent(e, null);
    }
  },
});

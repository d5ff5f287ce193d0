import { DONATION } from '../domain/donation/events.js';
import { DONATION_PUBLIC } from '../domain/donation/rules.js';
import { RECURRING_GIFT } from '../domain/recurring-gift/events.js';
import { RECURRING_GIFT_PUBLIC } from '../domain/recurring-gift/decide.js';
import { recordProjection, utcDateTime } from './records.js';

export const DONATIONS = 'donations';
export const RECURRING_GIFTS = 'recurringGifts';

export const donationsProjection = recordProjection({
  prefix: DONATION,
  category: 'donation',
  collection: { name: DONATIONS, idField: 'PkDonation', indexes: [['FkTeam'], ['FkTeam', 'FkConstituent']] },
  fields: DONATION_PUBLIC,
  extra: (doc, event) => {
    switch (event.type) {
      case `${DONATION}Receipted`:
        return { ...doc, IsReceipted: true };
      case `${DONATION}Thanked`:
        return { ...doc, IsThanked: true };
      default:
        // DonationRefunded changes nothing public on the refunded gift: the refund is its own donation.
        return null;
    }
  },
});

export const recurringGiftsProjection = recordProjection({
  prefix: RECURRING_GIFT,
  category: 'recurring_gift',
  collection: { name: RECURRING_GIFTS, idField: 'PkRecurringGift', indexes: [['FkTeam']] },
  fields: RECURRING_GIFT_PUBLIC,
  extra: (doc, event) => (event.type === `${RECURRING_GIFT}Canceled` ? { ...doc, CanceledDate: utcDateTime(event.metadata.at).slice(0, 10) } : null),
});

import { unknownEvent } from '../shared/events.js';
import { type Fires, fires, NONE } from '../shared/webhooks.js';
import type { RecurringGiftEvent, RecurringGiftState } from './events.js';

const STARTED = fires('donation.recurring_started');
const CANCELED = fires('donation.recurring_canceled');

/** Setting a gift up fires donation.recurring_started; canceling it donation.recurring_canceled, once. */
export function recurringGiftWebhooks(e: RecurringGiftEvent, before: RecurringGiftState, _after: RecurringGiftState): Fires {
  switch (e.type) {
    case 'RecurringGiftCreated':
      return STARTED;
    case 'RecurringGiftCanceled':
      return before.canceledAt ? NONE : CANCELED;
    default:
      return unknownEvent(e, NONE);
  }
}

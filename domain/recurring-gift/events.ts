import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Recurring gifts (decisions.md 6). Events: RecurringGiftCreated {id, fields} when a donor sets
 * one up, RecurringGiftCanceled {id} when the schedule is canceled.
 */
export const RECURRING_GIFT = 'RecurringGift';
/** The stream category, as domain/resources.ts registers it: record 12's stream is `recurring_gift-12`. */
export const RECURRING_GIFT_CATEGORY = 'recurring_gift';
export const recurringGiftStream = (id: number) => `${RECURRING_GIFT_CATEGORY}-${id}`;

export type RecurringGiftEvent =
  | Extract<RecordEvents<typeof RECURRING_GIFT>, { type: 'RecurringGiftCreated' }>
  | DomainEvent<'RecurringGiftCanceled', { id: number }>;

export interface RecurringGiftState extends RecordState {
  canceledAt: string | null;
}

export function evolveRecurringGift(s: RecurringGiftState, e: Folded<RecurringGiftEvent>): RecurringGiftState {
  switch (e.type) {
    case 'RecurringGiftCreated':
      return recordCreated(s, e);
    case 'RecurringGiftCanceled':
      return { ...s, canceledAt: e.metadata?.at ?? null, modifiedAt: e.metadata?.at ?? s.modifiedAt };
    default:
      return unknownEvent(e, s);
  }
}

export const recurringGiftEvolver: Evolver<RecurringGiftState, RecurringGiftEvent> = {
  initial: () => ({ ...emptyRecord(), canceledAt: null }),
  evolve: evolveRecurringGift,
};

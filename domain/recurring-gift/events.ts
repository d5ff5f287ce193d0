import type { Evolver } from '../shared/events.js';
import { emptyRecord, evolveRecord, type RecordEvent, type RecordState } from '../shared/record.js';

/**
 * Recurring gifts (decisions.md 6). Events: RecurringGiftCreated {id, fields} when a donor sets
 * one up, RecurringGiftCanceled {id} when the schedule is canceled.
 */
export const RECURRING_GIFT = 'RecurringGift';
export const recurringGiftStream = (id: number) => `recurring_gift-${id}`;

export interface RecurringGiftState extends RecordState {
  canceledAt: string | null;
}

export function evolveRecurringGift(s: RecurringGiftState, e: RecordEvent): RecurringGiftState {
  if (e.type === `${RECURRING_GIFT}Canceled`) return { ...s, canceledAt: e.metadata?.at ?? null, modifiedAt: e.metadata?.at ?? s.modifiedAt };
  return { ...s, ...evolveRecord(RECURRING_GIFT, s, e) };
}

export const recurringGiftEvolver: Evolver<RecurringGiftState> = {
  initial: () => ({ ...emptyRecord(), canceledAt: null }),
  evolve: (s, e) => evolveRecurringGift(s, e as RecordEvent),
};

import type { ConstituentEmailClaimed, ConstituentEvent } from './constituent/events.js';
import type { DonationEvent } from './donation/events.js';
import type { EventTicketEvent } from './event-ticket/events.js';
import type { EventEvent } from './event/events.js';
import type { LookupEvent } from './lookup/events.js';
import type { NotificationEvent } from './notification/delivery.js';
import type { RecurringGiftEvent } from './recurring-gift/events.js';
import type { DomainEvent, RecordedEvent } from './shared/events.js';
import type { TaskGroupEvent } from './task-group/events.js';
import type { TeamEvent } from './team/events.js';
import type { TaskEvent } from './volunteer-task/events.js';
import type { VolunteerConstituentClaimed, VolunteerEvent } from './volunteer/events.js';
import type { EndpointEvent } from './webhook-endpoint/events.js';

/** An id block a process reserved on `ids-<kind>` (commands/ids.ts): bookkeeping, not a change. */
export type IdBlockReserved = DomainEvent<'IdBlockReserved', { kind: string; from: number; to: number }>;

/**
 * A batch write with an Idempotency-Key began (decisions.md §14), on `batch-<ref>`
 * (commands/batch.ts): its position is where a retry looks for the items that committed.
 * Bookkeeping, not a change.
 */
export type BatchStarted = DomainEvent<'BatchStarted', { items: number }>;

/**
 * The events of each stream category (`constituent` of `constituent-12`). A stream holds only
 * its own category's events; that is what lets a reader of a category switch over its union.
 */
export interface EventsByCategory {
  team: TeamEvent;
  lookup: LookupEvent;
  constituent: ConstituentEvent;
  constituent_email: ConstituentEmailClaimed;
  volunteer: VolunteerEvent;
  volunteer_constituent: VolunteerConstituentClaimed;
  volunteer_task: TaskEvent;
  volunteer_task_group: TaskGroupEvent;
  event: EventEvent;
  event_ticket: EventTicketEvent;
  donation: DonationEvent;
  recurring_gift: RecurringGiftEvent;
  webhook_endpoint: EndpointEvent;
  notification: NotificationEvent;
  ids: IdBlockReserved;
  batch: BatchStarted;
}

export type Category = keyof EventsByCategory;

/** Every stream category, checked against EventsByCategory by the compiler (none missing, none extra). */
const CATEGORY_SET: Record<Category, true> = {
  team: true,
  lookup: true,
  constituent: true,
  constituent_email: true,
  volunteer: true,
  volunteer_constituent: true,
  volunteer_task: true,
  volunteer_task_group: true,
  event: true,
  event_ticket: true,
  donation: true,
  recurring_gift: true,
  webhook_endpoint: true,
  notification: true,
  ids: true,
  batch: true,
};
export const CATEGORIES = Object.keys(CATEGORY_SET) as Category[];

/** Every domain event the log can hold. */
export type AnyDomainEvent = EventsByCategory[Category];

/** A recorded event of some categories, typed by them. */
export type LoggedEvent<C extends Category = Category> = RecordedEvent<EventsByCategory[C]>;

/**
 * The one place an event from the log becomes the typed union. The log's adapters deserialize
 * JSON that only the deciders above ever wrote, so this checks nothing (a validation pass per
 * event would cost every projector and the dispatcher); it only names what the events are.
 */
export const fromLog = (e: RecordedEvent): LoggedEvent => e as LoggedEvent;

/** Whether an event is on a stream of `category`, narrowing it to that category's events. */
export const inCategory = <C extends Category>(e: LoggedEvent, category: C): e is LoggedEvent & LoggedEvent<C> =>
  e.stream.startsWith(category) && e.stream.charCodeAt(category.length) === 45; // '-'

/** The record id of a record's stream, `<category>-<id>`: 12 of `constituent-12` (categories hold no dash). */
export const streamIdOf = (stream: string): number => Number(stream.slice(stream.indexOf('-') + 1));

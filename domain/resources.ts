import { CONSTITUENT_CATEGORY, constituentEvolver } from './constituent/events.js';
import { DONATION_CATEGORY, donationEvolver } from './donation/events.js';
import { EVENT_TICKET_CATEGORY, eventTicketEvolver } from './event-ticket/events.js';
import { EVENT_CATEGORY, eventEvolver } from './event/events.js';
import { eventWebhookEvolver } from './event/webhooks.js';
import { RECURRING_GIFT_CATEGORY, recurringGiftEvolver } from './recurring-gift/events.js';
import type { Category } from './events.js';
import type { Evolver } from './shared/events.js';
import type { RecordState } from './shared/record.js';
import { TASK_GROUP_CATEGORY, taskGroupEvolver } from './task-group/events.js';
import { TASK_CATEGORY, taskEvolver } from './volunteer-task/events.js';
import { VOLUNTEER_CATEGORY, volunteerEvolver } from './volunteer/events.js';

/**
 * A record resource's facts, in one place: the admin surface's path segment, its stream
 * category (the stream of record 12 is `<category>-12`), its event type prefix, the key of its
 * single read, the name of its webhook types and read-model id, the evolvers of its state, and
 * whether an operator may lock or delete it. Commands (commands/records.ts), history
 * (projections/history/kinds.ts) and the webhook catalog (dispatcher/catalog.ts) take them from
 * here; what the other layers add (a delete's cascades, history's read fields, the webhook
 * mappers and the payload schemas) they keep in tables keyed by the names below, typed so that
 * the compiler asks for an entry for every resource that needs one.
 */
export interface Resource {
  /** Path segment under /admin/v1/teams/:teamId/ */
  path: string;
  category: Category;
  /** Event type prefix: `Constituent` of `ConstituentCreated`. */
  prefix: string;
  /** The single read's key (`{constituent: ...}`). */
  key: string;
  /** The resource as webhook types and messages name it: `volunteer_task`. */
  resource: string;
  /** Its name in messages. */
  what: string;
  /** The read model's id field. */
  idField: string;
  evolver: Evolver<RecordState>;
  /** The record as its webhooks and history see it, where that differs from `evolver` (an event's location names). */
  asOfEvolver?: Evolver<RecordState>;
  /** Whether the admin surface knows it: its log history, and its lock and delete where allowed. */
  admin: boolean;
  lockable: boolean;
  deletable: boolean;
  /** Whether it has a public history and point-in-time reads (decisions.md §10). */
  history: boolean;
  /** The prefix of the webhook types its events fire (`donation.` for a recurring gift's too); none fire without it. */
  fires?: string;
}

export const RESOURCES = {
  constituent: {
    path: 'constituents', category: CONSTITUENT_CATEGORY, prefix: 'Constituent', key: 'constituent', resource: 'constituent', what: 'constituent', idField: 'PkConstituent',
    evolver: constituentEvolver, admin: true, lockable: true, deletable: true, history: true, fires: 'constituent.',
  },
  volunteer: {
    path: 'volunteers', category: VOLUNTEER_CATEGORY, prefix: 'Volunteer', key: 'volunteer', resource: 'volunteer', what: 'volunteer', idField: 'PkVolunteer',
    evolver: volunteerEvolver, admin: true, lockable: true, deletable: true, history: true, fires: 'volunteer.',
  },
  volunteerTask: {
    path: 'volunteer-tasks', category: TASK_CATEGORY, prefix: 'VolunteerTask', key: 'volunteerTask', resource: 'volunteer_task', what: 'volunteer task', idField: 'PkTask',
    evolver: taskEvolver, admin: true, lockable: true, deletable: true, history: true, fires: 'volunteer_task.',
  },
  taskGroup: {
    path: 'volunteer-task-groups', category: TASK_GROUP_CATEGORY, prefix: 'VolunteerTaskGroup', key: 'volunteerTaskGroup', resource: 'volunteer_task_group', what: 'volunteer task group', idField: 'PkTaskGroup',
    evolver: taskGroupEvolver, admin: true, lockable: false, deletable: false, history: false,
  },
  event: {
    path: 'events', category: EVENT_CATEGORY, prefix: 'Event', key: 'event', resource: 'event', what: 'event', idField: 'PkEvent',
    evolver: eventEvolver, asOfEvolver: eventWebhookEvolver as Evolver<RecordState>, admin: true, lockable: true, deletable: true, history: true, fires: 'event.',
  },
  donation: {
    path: 'donations', category: DONATION_CATEGORY, prefix: 'Donation', key: 'donation', resource: 'donation', what: 'donation', idField: 'PkDonation',
    evolver: donationEvolver as unknown as Evolver<RecordState>, admin: true, lockable: true, deletable: true, history: false, fires: 'donation.',
  },
  // Started and canceled through their own routes, unknown to the admin surface; they fire donation types.
  recurringGift: {
    path: 'recurring-gifts', category: RECURRING_GIFT_CATEGORY, prefix: 'RecurringGift', key: 'recurringGift', resource: 'recurring_gift', what: 'recurring gift', idField: 'PkRecurringGift',
    evolver: recurringGiftEvolver, admin: false, lockable: false, deletable: false, history: false, fires: 'donation.',
  },
  // Ticket sales are recorded, never edited through /admin/v1: listed for their history only.
  eventTicket: {
    path: 'event-tickets', category: EVENT_TICKET_CATEGORY, prefix: 'EventTicket', key: 'eventTicket', resource: 'event_ticket', what: 'event ticket sale', idField: 'PkEventTicket',
    evolver: eventTicketEvolver, admin: true, lockable: false, deletable: false, history: false,
  },
} as const satisfies Record<string, Resource>;

export type ResourceName = keyof typeof RESOURCES;

type Registry = typeof RESOURCES;

/** The resources whose entry has `flag` true. */
type Where<F extends 'admin' | 'deletable' | 'history'> = { [K in ResourceName]: Registry[K][F] extends true ? K : never }[ResourceName];

export type AdminResource = Where<'admin'>;
export type DeletableResource = Where<'deletable'>;
export type HistoryResource = Where<'history'>;

/** The resources whose events fire webhooks (an entry with `fires`). */
export type FiringResource = { [K in ResourceName]: Registry[K] extends { fires: string } ? K : never }[ResourceName];

/** A record's stream: `constituent-12`. */
export const streamOf = (r: Pick<Resource, 'category'>, id: number): string => `${r.category}-${id}`;

import type { FiringResource, RESOURCES } from '../domain/resources.js';
import { WEBHOOK_TYPES, type WebhookType } from '../domain/webhook-endpoint/types.js';

/**
 * The catalog of webhook types as subscribers read it (`GET /api/v1/webhook-event-types`,
 * decisions.md 12): each type's description and what its `data` is. The payload builders
 * (payloads.ts) stamp each type's data by this table, and the JSON Schema of each type's data is
 * generated from it with the records' schemas (api/schemas/webhook-event-types.ts), so what is
 * sent and what is described cannot drift apart; tests validate every payload they produce.
 */

/** Sent by `POST .../webhook-endpoints/:id/test` to that endpoint alone; not a subscription type. */
export const PING = 'webhook.ping';

export type EventTypeName = WebhookType | typeof PING;

/** How a record's data is stamped: updates add DateLastModified, deletes DeletedUtc (spec 6.3). */
export type Stamp = 'created' | 'updated' | 'deleted';

/** The records whose fields a payload carries, as the API reads them: those that fire webhooks (domain/resources.ts). */
export type PayloadRecord = (typeof RESOURCES)[FiringResource]['resource'];

export type DataShape =
  /** The record as it stands after the change (before it, for a delete), with the API's field names. */
  | { record: PayloadRecord; stamp: Stamp }
  /** Spec 6.4's shared shape of the task person-events. */
  | { shape: 'task_person' }
  /** `{endpointId}` (decisions.md 12). */
  | { shape: 'ping' }
  /** `{PkConstituent, FkTeam, ErasedUtc}` (decisions.md §17). */
  | { shape: 'erased' };

interface Entry {
  description: string;
  data: DataShape;
}

const record = (r: PayloadRecord, stamp: Stamp, description: string): Entry => ({ description, data: { record: r, stamp } });
const person = (description: string): Entry => ({ description, data: { shape: 'task_person' } });

/** Spec 6.2's table, in its words; every type of the catalog has its entry (the type says so). */
const ENTRIES: Record<EventTypeName, Entry> = {
  'constituent.created': record('constituent', 'created', 'A constituent is added.'),
  'constituent.updated': record('constituent', 'updated', "A constituent's details change."),
  'constituent.deleted': record('constituent', 'deleted', 'A constituent is deleted.'),
  'constituent.erased': {
    description:
      'A constituent is erased (the right to be forgotten): every personal value it ever held is gone from Turnout, and its earlier changes read with those fields null and `erased: true`. Erase your own copies of this person.',
    data: { shape: 'erased' },
  },
  'volunteer.created': record('volunteer', 'created', 'A constituent is designated a volunteer.'),
  'volunteer.updated': record('volunteer', 'updated', "A volunteer's details change."),
  'volunteer.deleted': record('volunteer', 'deleted', 'A volunteer is removed (the constituent remains).'),
  'volunteer_task.created': record('volunteer_task', 'created', 'A task is created.'),
  'volunteer_task.updated': record('volunteer_task', 'updated', "A task's details change, an assignment or unassignment included."),
  'volunteer_task.deleted': record('volunteer_task', 'deleted', 'A task is deleted.'),
  'volunteer_task.signed_up': person('A volunteer is assigned to or signs up for a task (an API assignment produces this); also fires volunteer_task.updated.'),
  'volunteer_task.canceled': person('A volunteer cancels a task they signed up for; `constituent` is the volunteer removed. Also fires volunteer_task.updated.'),
  'volunteer_task.unassigned': person('A staff user unassigns the volunteer (an API unassignment produces this); `constituent` is the volunteer removed. Also fires volunteer_task.updated.'),
  'donation.created': record('donation', 'created', 'A money donation is recorded from any source (online form, payment processor, import, hand entry).'),
  'donation.updated': record('donation', 'updated', "A donation's details change."),
  'donation.deleted': record('donation', 'deleted', 'A donation is deleted.'),
  'donation.refunded': record('donation', 'created', "A refund is issued: the refund, a donation of its own, with RefundAmount and the refunded donation's id (FkRefundedDonation)."),
  'donation.receipted': record('donation', 'updated', 'A receipt is issued (IsReceipted turns on).'),
  'donation.thanked': record('donation', 'updated', 'A thank-you is sent (IsThanked turns on).'),
  'donation.recurring_started': record('recurring_gift', 'created', 'A donor sets up a recurring gift.'),
  'donation.recurring_canceled': record('recurring_gift', 'updated', 'A recurring gift schedule is canceled.'),
  'event.created': record('event', 'created', 'An event is added; fired once the event has a title, never for an untitled placeholder.'),
  'event.updated': record('event', 'updated', "An event's date, time, location, contact, capacity, status or type changes."),
  'event.deleted': record('event', 'deleted', 'An event is deleted; cleanup of abandoned untitled placeholders does not fire it.'),
  [PING]: { description: 'A test delivery, sent on request to one endpoint (POST .../webhook-endpoints/:id/test).', data: { shape: 'ping' } },
};

export interface EventType extends Entry {
  name: EventTypeName;
}

/** Every type of the catalog, in spec 6.2's order, then webhook.ping. */
const NAMES: EventTypeName[] = [...WEBHOOK_TYPES, PING];
export const EVENT_TYPES: readonly EventType[] = NAMES.map((name) => ({ name, ...ENTRIES[name] }));

export const eventTypeOf = (name: EventTypeName): EventType => ({ name, ...ENTRIES[name] });

/** The stamp of a record type's data (a person-event's shape has none of its own). */
export function stampOf(type: WebhookType): Stamp {
  const d = ENTRIES[type].data;
  return 'stamp' in d ? d.stamp : 'updated';
}

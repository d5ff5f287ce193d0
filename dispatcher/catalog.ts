import { constituentEvolver } from '../domain/constituent/events.js';
import { constituentWebhooks } from '../domain/constituent/webhooks.js';
import { donationEvolver } from '../domain/donation/events.js';
import { donationWebhooks } from '../domain/donation/webhooks.js';
import { appendedWith, eventWebhookEvolver, eventWebhooks } from '../domain/event/webhooks.js';
import { type EventsByCategory, inCategory, type LoggedEvent } from '../domain/events.js';
import { recurringGiftEvolver } from '../domain/recurring-gift/events.js';
import { recurringGiftWebhooks } from '../domain/recurring-gift/webhooks.js';
import { type FiringResource, RESOURCES } from '../domain/resources.js';
import type { Evolver, RecordedEvent } from '../domain/shared/events.js';
import type { Values } from '../domain/shared/fields.js';
import type { Fires } from '../domain/shared/webhooks.js';
import { ASSIGNED, taskEvolver, UNASSIGNED } from '../domain/volunteer-task/events.js';
import { isPersonWebhook, taskAppendedWith, taskWebhooks } from '../domain/volunteer-task/webhooks.js';
import { volunteerEvolver } from '../domain/volunteer/events.js';
import { volunteerAppendedWith, volunteerWebhooks } from '../domain/volunteer/webhooks.js';
import type { WebhookType } from '../domain/webhook-endpoint/types.js';
import { stampOf } from './event-types.js';
import type { AsOf, InWrite } from './history.js';
import * as P from './payloads.js';

export { WEBHOOK_TYPES, type WebhookType } from '../domain/webhook-endpoint/types.js';

/** One webhook a domain event fires: its type and its `data`. */
export interface Mapped {
  type: WebhookType;
  data: Values;
}

/** The stream categories whose events fire webhooks (domain/resources.ts `fires`): MAPPERS needs one mapper each. */
type Firing = (typeof RESOURCES)[FiringResource]['category'];

type Mapper<C extends Firing> = (event: LoggedEvent<C>, h: AsOf) => Promise<Mapped[]>;

interface MapperOf<C extends Firing, S> {
  /** The record as the category's webhooks see it. */
  evolver: Evolver<S, EventsByCategory[C]>;
  /** Which webhooks an event fires (domain/<resource>/webhooks.ts), given where it stands in its write (the companions `together` found after it). */
  rules: (event: EventsByCategory[C], before: S, after: S, write: InWrite) => Fires;
  /** The `data` of one of them, showing `state` (the record before or after the event). */
  data: (h: AsOf, state: S, event: LoggedEvent<C>, type: WebhookType) => Promise<Values> | Values;
  /** The events appended with this one, part of its change (domain/event/webhooks.ts appendedWith). */
  together?: (event: EventsByCategory[C]) => ((other: RecordedEvent) => boolean) | undefined;
}

/** The mechanics every category shares: read the record around the event, ask its rules, build the data. */
function mapper<C extends Firing, S>(m: MapperOf<C, S>): Mapper<C> {
  return async (e, h) => {
    const { before, after, write } = await h.around(e, m.evolver, m.together?.(e));
    const fired = m.rules(e, before, after, write);
    const out: Mapped[] = [];
    for (let i = 0; i < fired.length; i++) {
      const { type, state } = fired[i];
      out.push({ type, data: await m.data(h, state === 'before' ? before : after, e, type) });
    }
    return out;
  };
}

const MAPPERS: { [C in Firing]: Mapper<C> } = {
  constituent: mapper({
    evolver: constituentEvolver,
    rules: constituentWebhooks,
    data: (_h, s, e, type) => (type === 'constituent.erased' ? P.erasedData(s, e) : P.constituentData(s, e, stampOf(type))),
  }),
  volunteer: mapper({ evolver: volunteerEvolver, rules: volunteerWebhooks, together: volunteerAppendedWith, data: (h, s, e, type) => P.volunteerData(h, s, e, stampOf(type)) }),
  volunteer_task: mapper({
    evolver: taskEvolver,
    rules: taskWebhooks,
    together: taskAppendedWith,
    // A person webhook's data (spec 6.4) names the volunteer its event does; the volunteer_task.updated
    // a person-event also fires is the task's, as every other.
    data: (h, s, e, type) =>
      (e.type === ASSIGNED || e.type === UNASSIGNED) && isPersonWebhook(type) ? P.taskPersonData(h, s, e.data.volunteerId, e) : P.taskData(h, s, e, stampOf(type)),
  }),
  donation: mapper({ evolver: donationEvolver, rules: donationWebhooks, data: (_h, s, e, type) => P.donationData(s, e, stampOf(type)) }),
  recurring_gift: mapper({ evolver: recurringGiftEvolver, rules: recurringGiftWebhooks, data: (_h, s, e, type) => P.recurringGiftData(s, e, stampOf(type)) }),
  event: mapper({ evolver: eventWebhookEvolver, rules: eventWebhooks, data: (h, s, e, type) => P.eventData(h, s, e, stampOf(type)), together: appendedWith }),
};

export const categoryOf = (stream: string) => stream.slice(0, Math.max(0, stream.lastIndexOf('-')));

const fires = (category: string): category is Firing => Object.hasOwn(MAPPERS, category);

/** The webhook types of each category start with this (domain/resources.ts `fires`). */
const RESOURCE_OF = Object.fromEntries(Object.values(RESOURCES).flatMap((r) => ('fires' in r ? [[r.category, r.fires]] : []))) as Record<Firing, string>;

/** Whether an endpoint subscribed to `events` can receive anything a category's events fire. */
export function canReceive(category: string, events: readonly string[]): boolean {
  if (!fires(category)) return false;
  const resource = RESOURCE_OF[category];
  return events.some((t) => t === '*' || t.startsWith(resource));
}

/** Whether a log event could fire a webhook at all (cheap; no reads). */
export const mayFire = (e: RecordedEvent) => Boolean(e.metadata?.team) && fires(categoryOf(e.stream));

/** The webhooks a domain event fires, with their payloads as of that event. */
export async function mapEvent(e: LoggedEvent, h: AsOf): Promise<Mapped[]> {
  const category = categoryOf(e.stream);
  return fires(category) ? mapIn(category, e, h) : [];
}

/** The category's mapper, given the event narrowed to the category's union. */
const mapIn = <C extends Firing>(category: C, e: LoggedEvent, h: AsOf): Promise<Mapped[]> =>
  inCategory(e, category) ? MAPPERS[category](e, h) : Promise.resolve([]);

import type { WebhookType } from '../webhook-endpoint/types.js';
import type { RecordState } from './record.js';

/**
 * The webhook rules of each resource live beside its events (domain/<resource>/webhooks.ts):
 * given one of its events and its record just before and just after it, which webhook types
 * fire, and which of the two states each one's data shows. The dispatcher reads the states and
 * builds the payloads; the rules decide.
 *
 * Rules answer module-level constants, so deciding allocates nothing per event.
 */
export interface Fired {
  readonly type: WebhookType;
  /** A deletion shows the record as it was; anything else as the event left it. */
  readonly state: 'before' | 'after';
}

export type Fires = readonly Fired[];

/**
 * Where an event stands in the write (one append) that stored it, for rules that fire once a
 * write: the companions that follow it there (those its resource's `appendedWith` names, folded
 * into `after`), and whether it is the write's first event in the stream.
 */
export interface WriteOf {
  readonly joined: readonly { readonly type: string }[];
  readonly opens: boolean;
}

/** An event stored alone. */
export const ALONE: WriteOf = Object.freeze({ joined: Object.freeze([]), opens: true });

/** No webhook. */
export const NONE: Fires = Object.freeze([]);

/** One webhook of `type`, built once where a rule is defined. */
export const fires = (type: WebhookType, state: Fired['state'] = 'after'): Fires => Object.freeze([Object.freeze({ type, state })]);

/** The three webhooks of a record resource's common rule. */
export interface RecordWebhooks {
  created: Fires;
  updated: Fires;
  deleted: Fires;
}

export const recordWebhooks = (created: WebhookType, updated: WebhookType, deleted: WebhookType): RecordWebhooks => ({
  created: fires(created),
  updated: fires(updated),
  deleted: fires(deleted, 'before'),
});

/*
 * The common rule of record resources: `<P>Created` fires created; `<P>Deleted` fires deleted
 * for a record that was live; any other event fires updated when it changed a public field
 * (volunteers' status entries included), so locks and PATCHes that change nothing fire nothing.
 */

export const deletedRecord = (w: RecordWebhooks, before: RecordState): Fires => (before.exists && !before.deleted ? w.deleted : NONE);

export const changedRecord = (w: RecordWebhooks, before: RecordState, after: RecordState): Fires =>
  !after.exists || after.deleted || sameFields(before.fields, after.fields) ? NONE : w.updated;

const sameFields = (a: RecordState['fields'], b: RecordState['fields']) => JSON.stringify(a) === JSON.stringify(b);

import { unknownEvent } from '../shared/events.js';
import { changedRecord, deletedRecord, type Fires, fires, NONE, recordWebhooks } from '../shared/webhooks.js';
import { type ConstituentEvent, type ConstituentState, isErasedEvent } from './events.js';

const CONSTITUENT = recordWebhooks('constituent.created', 'constituent.updated', 'constituent.deleted');
/** decisions.md §17: subscribers are asked to erase their copies, whether the record was live or deleted. */
const ERASED = fires('constituent.erased');

/** Spec 6.2: the common record rule (domain/shared/webhooks.ts). */
export function constituentWebhooks(e: ConstituentEvent, before: ConstituentState, after: ConstituentState): Fires {
  switch (e.type) {
    case 'ConstituentCreated':
      return CONSTITUENT.created;
    case 'ConstituentDeleted':
      return deletedRecord(CONSTITUENT, before);
    case 'ConstituentErased':
      return ERASED;
    case 'ConstituentUpdated':
      // An erased update may now change nothing visible (its personal fields read null), yet it
      // fired when it was made: its envelope keeps its place and id (decisions.md §17).
      if (isErasedEvent(e) && after.exists && !after.deleted) return CONSTITUENT.updated;
      return changedRecord(CONSTITUENT, before, after);
    case 'ConstituentLocked':
    case 'ConstituentUnlocked':
      return changedRecord(CONSTITUENT, before, after);
    default:
      return unknownEvent(e, NONE);
  }
}

import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, recordDeleted, recordLocked, recordUpdated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Constituent events: ConstituentCreated {id, fields}, ConstituentUpdated {id, changes},
 * ConstituentLocked, ConstituentUnlocked, ConstituentDeleted {id}. State is the common record.
 * On the email's claim stream (commands/constituents.ts): ConstituentEmailClaimed {constituentId}.
 */
export const CONSTITUENT = 'Constituent';
export type ConstituentEvent = RecordEvents<typeof CONSTITUENT>;
export type ConstituentEmailClaimed = DomainEvent<'ConstituentEmailClaimed', { constituentId: number }>;
export type ConstituentState = RecordState;

export function evolveConstituent(s: ConstituentState, e: Folded<ConstituentEvent>): ConstituentState {
  switch (e.type) {
    case 'ConstituentCreated':
      return recordCreated(s, e);
    case 'ConstituentUpdated':
      return recordUpdated(s, e);
    case 'ConstituentLocked':
      return recordLocked(s, true);
    case 'ConstituentUnlocked':
      return recordLocked(s, false);
    case 'ConstituentDeleted':
      return recordDeleted(s, e);
    default:
      return unknownEvent(e, s);
  }
}

export const constituentEvolver: Evolver<ConstituentState, ConstituentEvent> = { initial: emptyRecord, evolve: evolveConstituent };
/** The stream category, as domain/resources.ts registers it: record 12's stream is `constituent-12`. */
export const CONSTITUENT_CATEGORY = 'constituent';
export const constituentStream = (id: number) => `${CONSTITUENT_CATEGORY}-${id}`;

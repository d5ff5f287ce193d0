import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';
import { emptyRecord, recordCreated, recordDeleted, recordLocked, recordUpdated, type RecordEvents, type RecordState } from '../shared/record.js';

/**
 * Constituent events: ConstituentCreated {id, fields}, ConstituentUpdated {id, changes},
 * ConstituentLocked, ConstituentUnlocked, ConstituentDeleted {id}, ConstituentErased {id, reason}.
 * State is the common record, and whether it was erased (decisions.md §17).
 * On the email's claim stream (commands/constituents.ts): ConstituentEmailClaimed {constituentId}.
 *
 * Erasure also rewrites the stream's earlier events in place (eventlog/erase.ts): their personal
 * fields become null and their data gains `erased: true`, so every later fold of the stream
 * (history, as-of, payloads, rebuilds) sees the record without them.
 */
export const CONSTITUENT = 'Constituent';
export const ERASED = 'ConstituentErased';
export type ConstituentErased = DomainEvent<typeof ERASED, { id: number; reason: string | null }>;
export type ConstituentEvent = RecordEvents<typeof CONSTITUENT> | ConstituentErased;
export type ConstituentEmailClaimed = DomainEvent<'ConstituentEmailClaimed', { constituentId: number }>;
/** `erasedAt`: when it was erased (decisions.md §17); absent on a record never erased. */
export type ConstituentState = RecordState & { erasedAt?: string | null };

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
    case 'ConstituentErased':
      // Reads as deleted (decisions.md §17), and a later write finds nothing to change.
      return { ...recordDeleted(s, e), erasedAt: e.metadata?.at ?? null };
    default:
      return unknownEvent(e, s);
  }
}

/** An event of an erased constituent (rewritten by the erasure), or the erasure itself. */
export const isErasedEvent = (e: { type: string; data: unknown }): boolean => e.type === ERASED || (e.data as { erased?: unknown } | null)?.erased === true;

export const constituentEvolver: Evolver<ConstituentState, ConstituentEvent> = { initial: emptyRecord, evolve: evolveConstituent };
/** The stream category, as domain/resources.ts registers it: record 12's stream is `constituent-12`. */
export const CONSTITUENT_CATEGORY = 'constituent';
export const constituentStream = (id: number) => `${CONSTITUENT_CATEGORY}-${id}`;

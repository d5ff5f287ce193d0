import type { Evolver } from '../shared/events.js';
import { type RecordState, recordEvolver } from '../shared/record.js';

/**
 * Constituent events: ConstituentCreated {id, fields}, ConstituentUpdated {id, changes},
 * ConstituentLocked, ConstituentUnlocked, ConstituentDeleted {id}. State is the common record.
 */
export const CONSTITUENT = 'Constituent';
export type ConstituentState = RecordState;
export const constituentEvolver: Evolver<ConstituentState> = recordEvolver(CONSTITUENT);
export const constituentStream = (id: number) => `constituent-${id}`;

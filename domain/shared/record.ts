import type { Evolver } from './events.js';
import { DomainError, notFound, recordProtected } from './errors.js';
import type { Values } from './fields.js';

/**
 * What every record aggregate has in common: created with fields, updated with the fields that
 * changed, locked and unlocked from the application, deleted. Aggregates with more behaviour
 * (volunteers, tasks) fold their own events on top of this one.
 *
 * Event data: `<P>Created {id, fields}`, `<P>Updated {id, changes}`, `<P>Locked|Unlocked|Deleted {id}`.
 */
export interface RecordState {
  exists: boolean;
  deleted: boolean;
  id: number;
  team: number;
  fields: Values;
  locked: boolean;
  createdAt: string | null;
  modifiedAt: string | null;
}

export const emptyRecord = (): RecordState => ({
  exists: false,
  deleted: false,
  id: 0,
  team: 0,
  fields: {},
  locked: false,
  createdAt: null,
  modifiedAt: null,
});

export interface RecordEvent {
  type: string;
  data: Record<string, unknown>;
  metadata?: { team: number; at: string };
}

export function evolveRecord(prefix: string, state: RecordState, event: RecordEvent): RecordState {
  if (!event.type.startsWith(prefix)) return state;
  const at = event.metadata?.at ?? null;
  switch (event.type.slice(prefix.length)) {
    case 'Created':
      return {
        ...state,
        exists: true,
        id: event.data.id as number,
        team: event.metadata?.team ?? (event.data.team as number) ?? 0,
        fields: { ...(event.data.fields as Values) },
        createdAt: at,
        modifiedAt: at,
      };
    case 'Updated':
      return { ...state, fields: Object.assign({}, state.fields, event.data.changes as Values), modifiedAt: at };
    case 'Locked':
      return { ...state, locked: true };
    case 'Unlocked':
      return { ...state, locked: false };
    case 'Deleted':
      return { ...state, deleted: true, modifiedAt: at };
    default:
      return state;
  }
}

export const recordEvolver = (prefix: string): Evolver<RecordState> => ({
  initial: emptyRecord,
  evolve: (s, e) => evolveRecord(prefix, s, e as RecordEvent),
});

/** A record of another team is indistinguishable from a missing one. */
export function assertFound(state: RecordState, team: number, what: string, id: number): void {
  if (!state.exists || state.deleted || state.team !== team) throw notFound(what, id);
}

export function assertWritable(state: RecordState, team: number, what: string, id: number): void {
  assertFound(state, team, what, id);
  if (state.locked) throw recordProtected(what, id);
}

/** Lock and unlock (decisions.md 9): idempotent, so locking a locked record records nothing. */
export function decideLock(prefix: string, state: RecordState, team: number, what: string, id: number, lock: boolean) {
  assertFound(state, team, what, id);
  if (state.locked === lock) return [];
  return [{ type: `${prefix}${lock ? 'Locked' : 'Unlocked'}`, data: { id } }];
}

export function decideDelete(prefix: string, state: RecordState, team: number, what: string, id: number) {
  assertFound(state, team, what, id);
  return [{ type: `${prefix}Deleted`, data: { id } }];
}

export { DomainError };

import type { DomainEvent, Folded } from './events.js';
import { DomainError, notFound, recordProtected } from './errors.js';
import type { Values } from './fields.js';

/**
 * What every record aggregate has in common: created with fields, updated with the fields that
 * changed, locked and unlocked from the application, deleted. Aggregates with more behaviour
 * (volunteers, tasks) fold their own events on top of this one.
 *
 * Event data: `<P>Created {id, fields}`, `<P>Updated {id, changes}`, `<P>Locked|Unlocked|Deleted {id}`
 * (RecordEvents<P>).
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

/** The common record events of an aggregate whose event types start with P. */
export type RecordEvents<P extends string> =
  | DomainEvent<`${P}Created`, { id: number; fields: Values }>
  | DomainEvent<`${P}Updated`, { id: number; changes: Values }>
  | DomainEvent<`${P}Locked`, { id: number }>
  | DomainEvent<`${P}Unlocked`, { id: number }>
  | DomainEvent<`${P}Deleted`, { id: number }>;

/*
 * What each common record event does to the state. Each aggregate's evolve switches over its own
 * union and calls these, so a type it forgets is a compile error.
 */
export function recordCreated<S extends RecordState>(state: S, e: Folded<DomainEvent<string, { id: number; fields: Values }>>): S {
  const at = e.metadata?.at ?? null;
  return { ...state, exists: true, id: e.data.id, team: e.metadata?.team ?? 0, fields: { ...e.data.fields }, createdAt: at, modifiedAt: at };
}

export const recordUpdated = <S extends RecordState>(state: S, e: Folded<DomainEvent<string, { changes: Values }>>): S => ({
  ...state,
  fields: Object.assign({}, state.fields, e.data.changes),
  modifiedAt: e.metadata?.at ?? null,
});

export const recordLocked = <S extends RecordState>(state: S, locked: boolean): S => ({ ...state, locked });

export const recordDeleted = <S extends RecordState>(state: S, e: Folded): S => ({ ...state, deleted: true, modifiedAt: e.metadata?.at ?? null });

/** The fields an aggregate's own event sets, folded as an update (status entries, flags, assignments). */
export const recordFieldsSet = <S extends RecordState>(state: S, set: Values, e: Folded): S => ({
  ...state,
  fields: { ...state.fields, ...set },
  modifiedAt: e.metadata?.at ?? state.modifiedAt,
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
export function decideLock<P extends string>(prefix: P, state: RecordState, team: number, what: string, id: number, lock: boolean): RecordEvents<P>[] {
  assertFound(state, team, what, id);
  if (state.locked === lock) return [];
  return [lock ? { type: `${prefix}Locked`, data: { id } } : { type: `${prefix}Unlocked`, data: { id } }];
}

/**
 * An operator's delete is a write, so a locked record refuses it (`403 record_protected`,
 * decisions.md 9): unlock it first. A delete that is the consequence of another (a constituent's
 * volunteer going with the constituent: spec 2.2) is not an edit and goes through a lock, as a
 * deleted volunteer's tasks are unassigned locked or not.
 */
export function decideDelete<P extends string>(prefix: P, state: RecordState, team: number, what: string, id: number, options: { consequence?: boolean } = {}): RecordEvents<P>[] {
  if (options.consequence) assertFound(state, team, what, id);
  else assertWritable(state, team, what, id);
  return [{ type: `${prefix}Deleted`, data: { id } }];
}

export { DomainError };

import { changedFields, normaliseFields, type Values } from '../shared/fields.js';
import { notFound } from '../shared/errors.js';
import { assertWritable } from '../shared/record.js';
import { type ConstituentState, type ConstituentEvent } from './events.js';
import { CONSTITUENT_DEFAULTS, CONSTITUENT_FIELDS, CONSTITUENT_READ_ONLY, completeConstituent } from './rules.js';

export interface CreateConstituent {
  id: number;
  /** What validateCreate made of the body. */
  fields: Values;
}

export interface UpdateConstituent {
  id: number;
  team: number;
  body: Values;
}

/**
 * Validates and completes a create's body: first, because a failed create must write nothing,
 * not even an id; the decision then records what this returned.
 */
export function validateCreate(body: Values): Values {
  const sent = normaliseFields(CONSTITUENT_FIELDS, body, CONSTITUENT_READ_ONLY);
  // Object.assign, not a double spread: V8 takes a slow path for that one, several µs per create.
  return completeConstituent(Object.assign({}, CONSTITUENT_DEFAULTS, sent), sent, true);
}

export function decideCreate(cmd: CreateConstituent, state: ConstituentState): ConstituentEvent[] {
  if (state.exists) throw new Error(`constituent ${cmd.id} already exists`);
  return [{ type: 'ConstituentCreated', data: { id: cmd.id, fields: cmd.fields } }];
}

/** Only sent fields change; a PATCH that changes nothing records nothing (decisions.md 3). */
export function decideUpdate(cmd: UpdateConstituent, state: ConstituentState): ConstituentEvent[] {
  const sent = normaliseFields(CONSTITUENT_FIELDS, cmd.body, CONSTITUENT_READ_ONLY);
  assertWritable(state, cmd.team, 'constituent', cmd.id);
  const next = completeConstituent({ ...state.fields, ...sent }, sent, false);
  const changes = changedFields(state.fields, next);
  return Object.keys(changes).length ? [{ type: 'ConstituentUpdated', data: { id: cmd.id, changes } }] : [];
}

export interface EraseConstituent {
  id: number;
  team: number;
  reason: string | null;
}

/**
 * decisions.md §17: an unknown record (or another team's) is not found; an erased one records
 * nothing again (the same answer); a live or deleted one is erased, locked or not: the right to
 * be forgotten outranks an operator's lock.
 */
export function decideErase(cmd: EraseConstituent, state: ConstituentState): ConstituentEvent[] {
  if (!state.exists || state.team !== cmd.team) throw notFound('constituent', cmd.id);
  if (state.erasedAt !== undefined) return [];
  return [{ type: 'ConstituentErased', data: { id: cmd.id, reason: cmd.reason } }];
}

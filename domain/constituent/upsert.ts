import { DomainError, invalidField, missingField } from '../shared/errors.js';
import { normaliseFields, type Values } from '../shared/fields.js';
import type { RecordState } from '../shared/record.js';
import { emailKey } from '../shared/values.js';
import { CONSTITUENT_FIELDS, CONSTITUENT_READ_ONLY } from './rules.js';

/**
 * Upsert by email (spec 4.1, POST /constituents?mode=upsert&matchOn=email). The command finds
 * the active constituents of the team with the body's Email1 and asks decideUpsert what to do;
 * the lookup, the claim that keeps racing upserts to one create, and the writes are its I/O.
 */
export type UpsertDecision = { action: 'create' } | { action: 'update'; id: number };

/** The active constituents with the upserted Email1: how many there are, and some of their ids. */
export interface UpsertMatches {
  total: number;
  ids: readonly number[];
}

/**
 * The email an upsert matches on, normalised. Field checks only: a match is updated with the
 * sent fields (a PATCH), so the completeness a create needs (a name) is checked on create alone.
 */
export function upsertEmail(body: Values): string {
  const email = normaliseFields(CONSTITUENT_FIELDS, body, CONSTITUENT_READ_ONLY).Email1;
  const needs = 'mode=upsert with matchOn=email needs Email1 in the body.';
  // Sent as null: present, and invalid for the match (decisions.md §3); absent: missing.
  if (email === null) throw invalidField('Email1', needs);
  if (typeof email !== 'string') throw missingField('Email1', needs);
  return email;
}

/**
 * Whether a constituent, as its stream has it, is still an upsert's match: the team's, live, active,
 * with the upserted email (case aside), as the read model's look-up found it (commands/constituents.ts).
 */
export function stillMatches(s: RecordState, team: number, email: string): boolean {
  const f = s.fields;
  return s.exists && !s.deleted && s.team === team && f.IsActiveConstituent === true && typeof f.Email1 === 'string' && emailKey(f.Email1) === emailKey(email);
}

/** Exactly one active match is updated, none creates, more than one is ambiguous_match. */
export function decideUpsert(email: string, matches: UpsertMatches): UpsertDecision {
  if (matches.total > 1) throw new DomainError('ambiguous_match', `${matches.total} active constituents have Email1 ${email}; update one by id instead.`);
  if (matches.total === 0) return { action: 'create' };
  return { action: 'update', id: matches.ids[0] };
}

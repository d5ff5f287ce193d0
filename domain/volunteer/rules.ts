import type { FieldSpec } from '../shared/fields.js';

/** Spec 2.2: the volunteer's writable fields. FkConstituent is writable only on create. */
export const VOLUNTEER_FIELDS: FieldSpec = {
  FkConstituent: { kind: 'ref', nullable: false, description: 'The constituent this volunteer is; required on create, immutable afterwards' },
  IsActive: { kind: 'boolean', nullable: false, description: 'Deactivating logs a status entry; InactiveDate defaults to today' },
  ActiveDate: { kind: 'date' },
  InactiveDate: { kind: 'date' },
  IsSuspended: { kind: 'boolean', nullable: false, description: 'Suspending logs a suspension entry; SuspensionStartDate defaults to today' },
  SuspensionStartDate: { kind: 'date' },
  SuspensionEndDate: { kind: 'date' },
  IsTeamMember: { kind: 'boolean' },
  IsStudent: { kind: 'boolean' },
  IsEligibleForRehire: { kind: 'boolean' },
  NumTeeShirtsNeeded: { kind: 'int', min: 0, max: 1000 },
};

/** Read-only on reads: the linked constituent's name and contact (spec 2.2). */
export const VOLUNTEER_LINKED = ['ConstituentName', 'Email1', 'Phone1'] as const;

/**
 * The linked fields from the constituent's (a read model's document, or its state's fields); all
 * null for none. One home for what the volunteer read model and a volunteer's webhook data show.
 */
export function volunteerLinkedFields(constituent: Readonly<Record<string, unknown>> | null | undefined): Record<(typeof VOLUNTEER_LINKED)[number], unknown> {
  return { ConstituentName: constituent?.ConstituentName ?? null, Email1: constituent?.Email1 ?? null, Phone1: constituent?.Phone1 ?? null };
}

export const VOLUNTEER_READ_ONLY = ['PkVolunteer', 'FkTeam', 'DateCreated', 'DateLastModified', ...VOLUNTEER_LINKED];


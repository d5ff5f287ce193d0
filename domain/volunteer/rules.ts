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

export const VOLUNTEER_READ_ONLY = ['PkVolunteer', 'FkTeam', 'DateCreated', 'DateLastModified', ...VOLUNTEER_LINKED];


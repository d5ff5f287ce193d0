import { invalidField, missingField } from '../shared/errors.js';
import type { FieldSpec, Values } from '../shared/fields.js';

/** Spec 2.1: the constituent's writable fields. */
export const CONSTITUENT_FIELDS: FieldSpec = {
  FirstName: { kind: 'string', max: 50 },
  MiddleInitial: { kind: 'string', max: 50 },
  LastName: { kind: 'string', max: 50 },
  Nickname: { kind: 'string', max: 50 },
  Salutation: { kind: 'string', max: 150 },
  ConstituentName: { kind: 'string', max: 150, description: 'Display name; required for households and organizations, kept in sync from first + last for individuals.' },
  FkConstituentType: { kind: 'int', min: 1, max: 3, nullable: false, description: '1 = Individual (default), 2 = Household, 3 = Organization' },
  Email1: { kind: 'email' },
  Email2: { kind: 'email' },
  Phone1: { kind: 'phone', description: 'cell' },
  Phone2: { kind: 'phone', description: 'home' },
  Phone3: { kind: 'phone', description: 'work' },
  Website1: { kind: 'string', max: 500 },
  MailingAddressLine1: { kind: 'string' },
  MailingAddressLine2: { kind: 'string' },
  MailingCity: { kind: 'string' },
  MailingState: { kind: 'state' },
  MailingZipCode: { kind: 'string' },
  DateOfBirth: { kind: 'date' },
  IsEmailOk: { kind: 'boolean' },
  IsPhoneOk: { kind: 'boolean' },
  IsTextOk: { kind: 'boolean' },
  IsSolicitOk: { kind: 'boolean' },
  IsActiveConstituent: { kind: 'boolean', nullable: false },
  ConstituentDescription: { kind: 'string' },
};

/**
 * decisions.md §17: the personal fields are every string field of a constituent and DateOfBirth;
 * erasure leaves none of their values anywhere.
 */
export const PERSONAL_FIELDS: readonly string[] = Object.entries(CONSTITUENT_FIELDS)
  .filter(([name, spec]) => ['string', 'email', 'phone', 'state'].includes(spec.kind) || name === 'DateOfBirth')
  .map(([name]) => name);

/** A linked record's copies of the person (volunteer, task and ticket reads): what erasure clears there. */
export const PERSON_COPIES: readonly string[] = ['ConstituentName', 'Email1', 'Phone1', 'VolunteerName', 'VolunteerEmail', 'VolunteerPhone', 'PurchaserName', 'FirstName', 'LastName'];

export const CONSTITUENT_READ_ONLY = ['PkConstituent', 'FkTeam', 'DateCreated', 'DateLastModified'] as const;

export const INDIVIDUAL = 1;

/** Defaults of a new constituent: an individual, active. */
export const CONSTITUENT_DEFAULTS: Values = { FkConstituentType: INDIVIDUAL, IsActiveConstituent: true };

const blank = (v: unknown) => v === null || v === undefined || (typeof v === 'string' && v.trim() === '');

/**
 * Rules 1 and 2 of spec 2.1 on the record as it would be after the change, and the display
 * name kept in sync for individuals. `sent` tells which fields the caller named, so the error
 * points at the one to fix.
 */
export function completeConstituent(fields: Values, sent: Values, creating: boolean): Values {
  const out = { ...fields };
  const type = (out.FkConstituentType as number) ?? INDIVIDUAL;
  if (type === INDIVIDUAL) {
    if (blank(out.FirstName) && blank(out.LastName)) {
      const field = 'FirstName' in sent ? 'FirstName' : 'LastName' in sent ? 'LastName' : 'FirstName';
      const msg = 'An individual (FkConstituentType 1) needs FirstName and/or LastName.';
      throw creating && !('FirstName' in sent) && !('LastName' in sent) ? missingField(field, msg) : invalidField(field, msg);
    }
    out.ConstituentName = [out.FirstName, out.LastName].filter((v) => !blank(v)).map((v) => (v as string).trim()).join(' ');
  } else if (blank(out.ConstituentName)) {
    const msg = 'Households (2) and organizations (3) need ConstituentName.';
    throw 'ConstituentName' in sent ? invalidField('ConstituentName', msg) : missingField('ConstituentName', msg);
  }
  return out;
}

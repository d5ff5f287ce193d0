import { dateTimeMs } from '../shared/values.js';
import { invalidField } from '../shared/errors.js';
import type { FieldSpec, Values } from '../shared/fields.js';

/** Spec 2.3: the task's writable fields through the public API. */
export const TASK_FIELDS: FieldSpec = {
  VolunteerTaskTitle: { kind: 'string', max: 1500, nullable: false, description: 'Required on create' },
  VolunteerTaskDescription: { kind: 'string' },
  TaskStartDateTime: { kind: 'datetime' },
  TaskEndDateTime: { kind: 'datetime', description: 'May not be before TaskStartDateTime' },
  DateAssigned: { kind: 'date', description: 'Stamped with today on a new assignment when not sent' },
  FkVolunteer: { kind: 'ref', description: 'The assigned volunteer, or null = unassigned' },
  FkTaskGroup: { kind: 'ref', description: 'A task group id, or null' },
  FkCategory: { kind: 'ref', description: 'An id of GET /lookups categories, or null' },
  FkOutcome: { kind: 'ref', description: 'An id of GET /lookups outcomes, or null' },
  IsPublic: { kind: 'boolean', description: 'Whether the task shows on the public sign-up calendar' },
  IsComplete: { kind: 'boolean' },
  IsUnfulfilled: { kind: 'boolean' },
  ContactName: { kind: 'string' },
  ContactEmail: { kind: 'email' },
  ContactPhone: { kind: 'phone' },
  ContactPhoneExtension: { kind: 'string' },
  DeliveryLocationName: { kind: 'string' },
  DeliveryLocationAddress: { kind: 'string' },
  DeliveryLocationCity: { kind: 'string' },
  DeliveryLocationState: { kind: 'state' },
  DeliveryLocationZipCode: { kind: 'string' },
  DeliveryLocationParkingInstructions: { kind: 'string' },
  Mileage: { kind: 'int', min: 0 },
  MileageAmount: { kind: 'number', min: 0, description: 'Dollars' },
  IsAccomodations: { kind: 'boolean' },
  Accomodations: { kind: 'string' },
};

/** The task's own geography, set through the application surface only (decisions.md 9). */
export const TASK_GEOGRAPHY_FIELDS: FieldSpec = {
  FkDistrict: { kind: 'ref', description: 'An id of GET /lookups districts, or null' },
  FkPrecinct: { kind: 'ref', description: 'An id of GET /lookups precincts, or null' },
};

export const TASK_DERIVED = [
  'NumberOfHours',
  'FkDistrict',
  'DistrictName',
  'FkPrecinct',
  'PrecinctName',
  'VolunteerName',
  'VolunteerEmail',
  'VolunteerPhone',
  'TaskGroupTitle',
] as const;

export const TASK_READ_ONLY = ['PkTask', 'FkTeam', 'DateCreated', 'DateLastModified', ...TASK_DERIVED];

/** An end before its start is invalid_field naming TaskEndDateTime (decisions.md 3). */
export function checkTaskTimes(fields: Values): void {
  const start = fields.TaskStartDateTime;
  const end = fields.TaskEndDateTime;
  if (typeof start === 'string' && typeof end === 'string' && dateTimeMs(end) < dateTimeMs(start))
    throw invalidField('TaskEndDateTime', `TaskEndDateTime ${end} is before TaskStartDateTime ${start}; send an end at or after the start.`);
}

/** (end - start) in hours, 2 decimals; null unless both are set (decisions.md 6). */
export function numberOfHours(fields: Values): number | null {
  const start = fields.TaskStartDateTime;
  const end = fields.TaskEndDateTime;
  if (typeof start !== 'string' || typeof end !== 'string') return null;
  return Math.round((dateTimeMs(end) - dateTimeMs(start)) / 36_000) / 100;
}

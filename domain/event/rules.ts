import type { LookupList } from '../lookup/events.js';
import { timeZoneById } from '../lookup/timezones.js';
import { invalidField, missingField } from '../shared/errors.js';
import type { FieldSpec, Values } from '../shared/fields.js';
import { dateTimeMs } from '../shared/values.js';

/** Spec 2.5: the event's writable fields. */
export const EVENT_FIELDS: FieldSpec = {
  EventTitle: { kind: 'string', max: 150, nullable: false, description: 'Required on create' },
  StartDate: { kind: 'date' },
  EndDate: { kind: 'date', description: 'Not before StartDate' },
  StartTime: { kind: 'time' },
  EndTime: { kind: 'time', description: 'Not before StartTime when the event ends on its start day' },
  RegistrationOpenDateTime: { kind: 'datetime' },
  RegistrationCloseDateTime: { kind: 'datetime', description: 'Not before RegistrationOpenDateTime' },
  // An int (spec 2.5): bounded like one, so 1e300 or 2^53 are refused rather than stored imprecisely.
  MaxGuests: { kind: 'int', min: 0, max: 2_147_483_647, description: 'Capacity; 0 means no limit set' },
  Theme: { kind: 'string', max: 500 },
  WebinarLink: { kind: 'string', description: 'For online events' },
  FkStatus: { kind: 'ref', description: 'Id from GET /lookups statuses' },
  FkEventType: { kind: 'ref', description: 'Id from GET /lookups eventTypes' },
  FkCategory: { kind: 'ref', description: 'Id from GET /lookups categories' },
  FkSeason: { kind: 'ref', description: 'Id from GET /lookups seasons' },
  FkTimeZone: { kind: 'ref', description: 'Id from GET /lookups/event-time-zones' },
  IsPortal: { kind: 'boolean', description: 'Whether the event shows in portals' },
  ContactName: { kind: 'string' },
  ContactEmail: { kind: 'email' },
  ContactPhone: { kind: 'phone' },
  EventLocation: { kind: 'string' },
  EventLocationAddress: { kind: 'string' },
  EventLocationCity: { kind: 'string' },
  EventLocationZipCode: { kind: 'string' },
  EventLocationState: { kind: 'state' },
};

/** Lookup-backed fields and the team list each id must come from (spec 2.5). */
export const EVENT_LOOKUPS: ReadonlyArray<[field: string, list: LookupList]> = [
  ['FkStatus', 'statuses'],
  ['FkEventType', 'eventTypes'],
  ['FkCategory', 'categories'],
  ['FkSeason', 'seasons'],
];

/**
 * Read-only geography (decisions.md 6), set through the application surface. Chapters,
 * divisions and departments have no lookup list, so the application sends each id with its
 * display name; districts and precincts are ids of the team's lookups and their names are read
 * from there.
 */
export const GEOGRAPHY_PAIRS = [
  ['FkChapter', 'ChapterName'],
  ['FkDivision', 'DivisionName'],
  ['FkDepartment', 'DepartmentName'],
] as const;

export const GEOGRAPHY_FIELDS: FieldSpec = {
  FkChapter: { kind: 'ref' },
  ChapterName: { kind: 'string', max: 150, description: 'Sent together with FkChapter' },
  FkDivision: { kind: 'ref' },
  DivisionName: { kind: 'string', max: 150, description: 'Sent together with FkDivision' },
  FkDepartment: { kind: 'ref' },
  DepartmentName: { kind: 'string', max: 150, description: 'Sent together with FkDepartment' },
  FkDistrict: { kind: 'ref', description: 'Id from GET /lookups districts' },
  FkPrecinct: { kind: 'ref', description: 'Id from GET /lookups precincts' },
};

export const GEOGRAPHY_LOOKUPS: ReadonlyArray<[field: string, list: LookupList, nameField: string]> = [
  ['FkDistrict', 'districts', 'DistrictName'],
  ['FkPrecinct', 'precincts', 'PrecinctName'],
];

/** Every geography field on reads, in order. */
export const GEOGRAPHY_READ_FIELDS = [
  'FkChapter', 'ChapterName', 'FkDivision', 'DivisionName', 'FkDepartment', 'DepartmentName',
  'FkDistrict', 'DistrictName', 'FkPrecinct', 'PrecinctName',
] as const;

/** Named so a client sending one learns it is read-only rather than misspelt. */
export const EVENT_READ_ONLY = [
  'PkEvent', 'FkTeam', 'DateCreated', 'DateLastModified', 'IsPublic', 'IsTicketSales', ...GEOGRAPHY_READ_FIELDS,
] as const;

/**
 * Rules across fields, on the event as it would be after the change (decisions.md 3): an end
 * may not be before its start. Without an EndDate the event ends on its start day, so its
 * times are compared.
 */
export function checkEventRules(fields: Values): void {
  const { StartDate, EndDate, StartTime, EndTime, RegistrationOpenDateTime: open, RegistrationCloseDateTime: close } = fields as Record<string, string | null | undefined>;
  const endDay = EndDate ?? StartDate ?? null;
  const startDay = StartDate ?? null;
  if (startDay && endDay && endDay < startDay) throw invalidField('EndDate', `EndDate ${EndDate} is before StartDate ${StartDate}; send an EndDate on or after it.`);
  if (endDay === startDay && StartTime && EndTime && EndTime < StartTime)
    throw invalidField('EndTime', `EndTime ${EndTime} is before StartTime ${StartTime} on the same day; send a later EndTime or a later EndDate.`);
  if (open && close && dateTimeMs(close) < dateTimeMs(open))
    throw invalidField('RegistrationCloseDateTime', `RegistrationCloseDateTime ${close} is before RegistrationOpenDateTime ${open}.`);
  const tz = fields.FkTimeZone;
  if (typeof tz === 'number' && !timeZoneById(tz))
    throw invalidField('FkTimeZone', `FkTimeZone ${tz} is not an event time zone; see GET /lookups/event-time-zones.`);
}

/** EventTitle is required and may not be blank: `event.created` needs a title (spec 3). */
export function checkTitle(fields: Values, creating: boolean): void {
  const t = fields.EventTitle;
  if (t === undefined) {
    if (creating) throw missingField('EventTitle', 'EventTitle is required to create an event.');
    return;
  }
  if (typeof t !== 'string' || t.trim() === '') throw invalidField('EventTitle', 'EventTitle cannot be empty.');
}

/**
 * Chapter, division and department travel as id + name pairs: an id needs its name in the same
 * request, a name needs an id on the record, and clearing the id clears the name.
 */
export function completeGeography(current: Values, sent: Values): Values {
  const out = { ...sent };
  for (const [idField, nameField] of GEOGRAPHY_PAIRS) {
    const id = idField in sent ? sent[idField] : (current[idField] ?? null);
    if (idField in sent && sent[idField] === null) {
      if (nameField in sent && sent[nameField] !== null) throw invalidField(nameField, `${nameField} cannot be set while ${idField} is null.`);
      out[nameField] = null;
      continue;
    }
    if (idField in sent && !(nameField in sent)) throw missingField(nameField, `Send ${nameField} with ${idField}.`);
    if (nameField in sent) {
      const name = sent[nameField];
      if (id === null) throw invalidField(nameField, `${nameField} needs ${idField}; send both.`);
      if (name === null || (typeof name === 'string' && name.trim() === '')) throw invalidField(nameField, `${nameField} cannot be empty while ${idField} is set; send ${idField}: null to clear both.`);
    }
  }
  return out;
}

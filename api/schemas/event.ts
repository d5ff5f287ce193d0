import { Type } from '@sinclair/typebox';
import { EVENT_FIELDS, GEOGRAPHY_FIELDS } from '../../domain/event/rules.js';
import { Created, ListOf, Nullable, One, Paging, Query } from './common.js';
import { readRecord, writeBody } from '../../validation/fields.js';
export { EventCreateBody } from '../../validation/bodies.js';

const id = (description: string) => Nullable(Type.Integer({ description }));
const name = (description: string) => Nullable(Type.String({ description }));

/** Read-only fields of an event read (spec 2.5, decisions.md 6). */
const READ_ONLY = {
  IsPublic: Type.Boolean({ description: 'Read-only: whether the event is published on its public page; new events are false until published in the application' }),
  IsTicketSales: Type.Boolean({ description: 'Read-only: whether tickets are on sale; new events are false until turned on in the application' }),
  FkChapter: id('Read-only'),
  ChapterName: name('Read-only'),
  FkDivision: id('Read-only'),
  DivisionName: name('Read-only'),
  FkDepartment: id('Read-only'),
  DepartmentName: name('Read-only'),
  FkDistrict: id('Read-only; id from GET /lookups districts'),
  DistrictName: name('Read-only'),
  FkPrecinct: id('Read-only; id from GET /lookups precincts'),
  PrecinctName: name('Read-only'),
};

export const Event = Type.Object(readRecord('PkEvent', EVENT_FIELDS, READ_ONLY).properties, { $id: 'Event' });
export const EventRef = Type.Ref(Event);
export const EventPatchBody = writeBody(EVENT_FIELDS);
/** The application's geography PATCH (decisions.md 9). */
export const EventGeographyBody = writeBody(GEOGRAPHY_FIELDS);

const lookupId = (list: string) => Type.Optional(Type.Integer({ minimum: 1, description: `Id from GET /lookups ${list}` }));

export const EventListQuery = Query({
  search: Type.Optional(Type.String({ description: 'Title, contact (name, email, phone) or location (name, address, city, zip, state); or an id' })),
  startDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD: events whose StartDate is on or after it' })),
  endDate: Type.Optional(Type.String({ description: 'YYYY-MM-DD: events whose StartDate is on or before it' })),
  statusId: lookupId('statuses'),
  eventTypeId: lookupId('eventTypes'),
  categoryId: lookupId('categories'),
  seasonId: lookupId('seasons'),
  ...Paging,
});

export const EventCreated = Created('event', EventRef);
export const EventOne = One('event', EventRef);
export const EventList = ListOf('events', EventRef);

import { describe, it } from 'vitest';
import type { DomainEvent } from '../../domain/shared/events.js';
import { DEFAULT_NOTIFICATION_TEMPLATES, DEFAULT_PUBLIC_FORM } from '../../domain/event/creation.js';
import { decideCreate, decideGeography, decideUpdate } from '../../domain/event/decide.js';
import { eventEvolver, type EventState } from '../../domain/event/events.js';
import { given as decider, NO_FIELD } from '../support/decider.js';

const TEAM = 7;

/** given(past events).when(decision).then(new events) / .thenFails(code, field): the shared decider helper. */
const given = (...past: DomainEvent[]) => decider(eventEvolver, past, TEAM);

const created = (fields: Record<string, unknown>): DomainEvent => ({ type: 'EventCreated', data: { id: 1, fields } });
const create = (body: Record<string, unknown>) => (s: EventState) =>
  decideCreate({ id: 1, team: TEAM, body, templates: DEFAULT_NOTIFICATION_TEMPLATES, formDefaults: DEFAULT_PUBLIC_FORM }, s);
const update = (body: Record<string, unknown>, team = TEAM) => (s: EventState) => decideUpdate({ id: 1, team, body }, s);
const geography = (body: Record<string, unknown>) => (s: EventState) => decideGeography({ id: 1, team: TEAM, body }, s);

describe('creating an event', () => {
  it('records the normalised fields, the seeded templates and the form defaults together', () => {
    given()
      .when(create({ EventTitle: 'Gala', StartTime: '6 PM', EventLocationState: 'new york', ContactPhone: '+1 555 867 5309' }))
      .then([
        created({ EventTitle: 'Gala', StartTime: '18:00', EventLocationState: 'NY', ContactPhone: '5558675309' }),
        { type: 'EventNotificationTemplatesSeeded', data: { id: 1, templates: DEFAULT_NOTIFICATION_TEMPLATES.map((t) => ({ ...t })) } },
        { type: 'EventPublicFormDefaultsApplied', data: { id: 1, defaults: DEFAULT_PUBLIC_FORM } },
      ]);
  });

  it('needs a title', () => {
    given().when(create({ Theme: 'x' })).thenFails('missing_field', 'EventTitle');
    given().when(create({ EventTitle: ' ' })).thenFails('invalid_field', 'EventTitle');
    given().when(create({ EventTitle: 'x'.repeat(151) })).thenFails('invalid_field', 'EventTitle');
  });

  it('refuses an end before its start and an unknown time zone', () => {
    given().when(create({ EventTitle: 'x', StartDate: '2026-05-02', EndDate: '2026-05-01' })).thenFails('invalid_field', 'EndDate');
    given().when(create({ EventTitle: 'x', StartDate: '2026-05-01', StartTime: '10:00', EndTime: '9:59 AM' })).thenFails('invalid_field', 'EndTime');
    given().when(create({ EventTitle: 'x', StartTime: '10:00', EndTime: '09:00' })).thenFails('invalid_field', 'EndTime');
    given()
      .when(create({ EventTitle: 'x', RegistrationOpenDateTime: '2026-05-01T10:00:00Z', RegistrationCloseDateTime: '2026-05-01T11:59:00+02:00' }))
      .thenFails('invalid_field', 'RegistrationCloseDateTime');
    given().when(create({ EventTitle: 'x', FkTimeZone: 16 })).thenFails('invalid_field', 'FkTimeZone');
  });

  it('refuses read-only fields as unknown_field', () => {
    given().when(create({ EventTitle: 'x', IsTicketSales: true })).thenFails('unknown_field', 'IsTicketSales');
  });
});

describe('updating an event', () => {
  const past = created({ EventTitle: 'Gala', StartDate: '2026-05-01', EndDate: '2026-05-01', StartTime: '18:00', EndTime: '21:00' });

  it('records only what changed', () => {
    given(past).when(update({ EventTitle: 'Gala', EndTime: '22:00', Theme: null })).then([{ type: 'EventUpdated', data: { id: 1, changes: { EndTime: '22:00' } } }]);
    given(past).when(update({ StartTime: '6:00 PM' })).then([]);
  });

  it('checks the rules on the event as it would be', () => {
    given(past).when(update({ StartTime: '21:30' })).thenFails('invalid_field', 'EndTime');
    given(past).when(update({ StartDate: '2026-05-02' })).thenFails('invalid_field', 'EndDate');
    given(past).when(update({ StartDate: '2026-05-02', EndDate: '2026-05-03' })).then([{ type: 'EventUpdated', data: { id: 1, changes: { StartDate: '2026-05-02', EndDate: '2026-05-03' } } }]);
    given(past).when(update({ EventTitle: null })).thenFails('invalid_field', 'EventTitle');
  });

  it('is not_found for a missing, deleted or other team event, and record_protected when locked', () => {
    given().when(update({ Theme: 'x' })).thenFails('not_found', NO_FIELD);
    given(past, { type: 'EventDeleted', data: { id: 1 } }).when(update({ Theme: 'x' })).thenFails('not_found', NO_FIELD);
    given(past).when(update({ Theme: 'x' }, TEAM + 1)).thenFails('not_found', NO_FIELD);
    given(past, { type: 'EventLocked', data: { id: 1 } }).when(update({ Theme: 'x' })).thenFails('record_protected', NO_FIELD);
    given(past, { type: 'EventLocked', data: { id: 1 } }, { type: 'EventUnlocked', data: { id: 1 } })
      .when(update({ Theme: 'x' }))
      .then([{ type: 'EventUpdated', data: { id: 1, changes: { Theme: 'x' } } }]);
  });
});

describe('setting an event geography', () => {
  const past = created({ EventTitle: 'Rally' });

  it('records id + name pairs and lookup ids; clearing an id clears its name', () => {
    given(past)
      .when(geography({ FkChapter: 3, ChapterName: 'North', FkDistrict: 9 }))
      .then([{ type: 'EventUpdated', data: { id: 1, changes: { FkChapter: 3, ChapterName: 'North', FkDistrict: 9 } } }]);
    given(past, { type: 'EventUpdated', data: { id: 1, changes: { FkChapter: 3, ChapterName: 'North' } } })
      .when(geography({ FkChapter: null }))
      .then([{ type: 'EventUpdated', data: { id: 1, changes: { FkChapter: null, ChapterName: null } } }]);
  });

  it('refuses an id without its name and a name without an id', () => {
    given(past).when(geography({ FkDivision: 2 })).thenFails('missing_field', 'DivisionName');
    given(past).when(geography({ DepartmentName: 'Ops' })).thenFails('invalid_field', 'DepartmentName');
    given(past).when(geography({ PrecinctName: 'P' })).thenFails('unknown_field', 'PrecinctName');
  });
});

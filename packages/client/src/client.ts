import { changes } from './changes.js';
import { Requester, type TurnoutOptions, type WithResponse } from './http.js';
import { readOnly, writable } from './resources.js';
import type { AnswerOf } from './types.js';

/**
 * The API as resources of small methods (decisions §16): `turnout.constituents.create(...)`,
 * `for await (const v of turnout.volunteers.list({ isActive: true }))`, `turnout.changes.list(...)`.
 */
export class Turnout {
  readonly constituents;
  readonly volunteers;
  readonly volunteerTasks;
  readonly events;
  readonly eventTickets;
  readonly volunteerTaskGroups;
  readonly lookups;
  readonly changes;

  constructor(options: TurnoutOptions) {
    const http = new Requester(options);
    this.constituents = writable<{ create: 'createConstituent'; get: 'getConstituent'; update: 'updateConstituent'; list: 'listConstituents'; history: 'getConstituentHistory'; batch: 'createConstituentBatch'; plural: 'constituents' }>(
      http,
      '/constituents',
      'constituents',
    );
    this.volunteers = writable<{ create: 'createVolunteer'; get: 'getVolunteer'; update: 'updateVolunteer'; list: 'listVolunteers'; history: 'getVolunteerHistory'; batch: 'createVolunteerBatch'; plural: 'volunteers' }>(
      http,
      '/volunteers',
      'volunteers',
    );
    this.volunteerTasks = writable<{
      create: 'createVolunteerTask';
      get: 'getVolunteerTask';
      update: 'updateVolunteerTask';
      list: 'listVolunteerTasks';
      history: 'getVolunteerTaskHistory';
      batch: 'createVolunteerTaskBatch';
      plural: 'volunteerTasks';
    }>(http, '/volunteer-tasks', 'volunteerTasks');
    this.events = writable<{ create: 'createEvent'; get: 'getEvent'; update: 'updateEvent'; list: 'listEvents'; history: 'getEventHistory'; batch: 'createEventBatch'; plural: 'events' }>(http, '/events', 'events');
    this.eventTickets = readOnly<'getEventTicket', 'listEventTickets', 'eventTickets'>(http, '/event-tickets', 'eventTickets');
    this.volunteerTaskGroups = readOnly<'getVolunteerTaskGroup', 'listVolunteerTaskGroups', 'volunteerTaskGroups'>(http, '/volunteer-task-groups', 'volunteerTaskGroups');
    this.lookups = {
      /** The team's lists whose ids go in Fk fields: categories, outcomes, statuses, event types, seasons, districts, precincts. */
      list: (): Promise<WithResponse<AnswerOf<'listLookups', 200>>> => http.send({ method: 'GET', path: '/lookups' }),
      /** The time zones for FkTimeZone. */
      eventTimeZones: (): Promise<WithResponse<AnswerOf<'listEventTimeZones', 200>>> => http.send({ method: 'GET', path: '/lookups/event-time-zones' }),
    };
    this.changes = changes(http);
  }
}

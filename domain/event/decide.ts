import { changedFields, normaliseFields, type Values } from '../shared/fields.js';
import { assertWritable } from '../shared/record.js';
import type { NotificationTemplate, PublicFormDefaults } from './creation.js';
import { type EventState, FORM_DEFAULTS_APPLIED, TEMPLATES_SEEDED, type EventEvent } from './events.js';
import { checkEventRules, checkTitle, completeGeography, EVENT_FIELDS, EVENT_READ_ONLY, GEOGRAPHY_FIELDS } from './rules.js';

export interface CreateEvent {
  id: number;
  team: number;
  body: Values;
  /** What the in-app Add Event sets up (domain/event/creation.ts), passed in so the decider stays pure. */
  templates: readonly NotificationTemplate[];
  formDefaults: PublicFormDefaults;
}

export interface UpdateEvent {
  id: number;
  team: number;
  body: Values;
}

/** Validates a create without deciding it: a failed create must write nothing, not even an id. */
export function validateCreate(body: Values): Values {
  const fields = normaliseFields(EVENT_FIELDS, body, EVENT_READ_ONLY);
  checkTitle(fields, true);
  checkEventRules(fields);
  return fields;
}

/** Validates the sent fields of a PATCH on their own (lookup ids are checked by the command). */
export const validateUpdate = (body: Values): Values => normaliseFields(EVENT_FIELDS, body, EVENT_READ_ONLY);

/**
 * Creation as the in-app Add Event does it (spec 2.5): the event, its seeded notification
 * templates and the public form defaults, in one append, so the log never holds an event
 * without them and the 201 answers only once all three are on the read model.
 */
export function decideCreate(cmd: CreateEvent, state: EventState): EventEvent[] {
  if (state.exists) throw new Error(`event ${cmd.id} already exists`);
  const fields = validateCreate(cmd.body);
  return [
    { type: 'EventCreated', data: { id: cmd.id, fields } },
    { type: TEMPLATES_SEEDED, data: { id: cmd.id, templates: cmd.templates.map((t) => ({ ...t })) } },
    { type: FORM_DEFAULTS_APPLIED, data: { id: cmd.id, defaults: structuredClone(cmd.formDefaults) } },
  ];
}

/** Only sent fields change; the cross-field rules hold on the result; no change records nothing. */
export function decideUpdate(cmd: UpdateEvent, state: EventState): EventEvent[] {
  const sent = validateUpdate(cmd.body);
  assertWritable(state, cmd.team, 'event', cmd.id);
  checkTitle(sent, false);
  const next = { ...state.fields, ...sent };
  checkEventRules(next);
  const changes = changedFields(state.fields, sent);
  return Object.keys(changes).length ? [{ type: 'EventUpdated', data: { id: cmd.id, changes } }] : [];
}

/** Validates an application geography PATCH on its own (district and precinct ids are checked by the command). */
export const validateGeography = (body: Values): Values =>
  normaliseFields(GEOGRAPHY_FIELDS, body, ['DistrictName', 'PrecinctName']);

/** The read-only geography (decisions.md 6), from the application surface. */
export function decideGeography(cmd: UpdateEvent, state: EventState): EventEvent[] {
  const sent = validateGeography(cmd.body);
  assertWritable(state, cmd.team, 'event', cmd.id);
  const changes = changedFields(state.fields, completeGeography(state.fields, sent));
  return Object.keys(changes).length ? [{ type: 'EventUpdated', data: { id: cmd.id, changes } }] : [];
}

import type { TSchema } from '@sinclair/typebox';
import { validateCreate as validateConstituent } from '../domain/constituent/decide.js';
import { CONSTITUENT_FIELDS } from '../domain/constituent/rules.js';
import { validateCreate as validateEvent } from '../domain/event/decide.js';
import { EVENT_FIELDS } from '../domain/event/rules.js';
import { DomainError } from '../domain/shared/errors.js';
import type { FieldSpec, Values } from '../domain/shared/fields.js';
import { validateCreate as validateTask } from '../domain/volunteer-task/decide.js';
import { TASK_FIELDS } from '../domain/volunteer-task/rules.js';
import { validateCreate as validateVolunteer } from '../domain/volunteer/decide.js';
import { VOLUNTEER_FIELDS } from '../domain/volunteer/rules.js';
import { ConstituentBody, CreateTaskBody, CreateVolunteerBody, EventCreateBody } from '../validation/bodies.js';
import { fromValidation } from '../validation/errors.js';
import { buildValidator } from '../validation/validator.js';
import type { Resource } from './resources.js';

export { RESOURCES, type Resource } from './resources.js';

interface ResourceRules {
  fields: FieldSpec;
  /** The create route's body schema. */
  body: TSchema;
  /** The domain's own check of a create (pure: what the command runs before it writes anything). */
  validate(body: Values): unknown;
}

const today = () => new Date().toISOString().slice(0, 10);

const RULES: Record<Resource, ResourceRules> = {
  constituents: { fields: CONSTITUENT_FIELDS, body: ConstituentBody, validate: validateConstituent },
  volunteers: { fields: VOLUNTEER_FIELDS, body: CreateVolunteerBody, validate: (b) => validateVolunteer(b, today()) },
  'volunteer-tasks': { fields: TASK_FIELDS, body: CreateTaskBody, validate: validateTask },
  events: { fields: EVENT_FIELDS, body: EventCreateBody, validate: validateEvent },
};

export const fieldsOf = (resource: Resource): FieldSpec => RULES[resource].fields;

/** The API's body limit (api/app.ts): a bigger row would be refused whatever it holds. */
const BODY_LIMIT = 64 * 1024;

export interface Problem {
  field: string;
  code: string;
  message: string;
}

/**
 * Checks one body as the server would, before anything is sent: the route's schema through the
 * validator the API uses (validation/: unknown, missing and mistyped fields, in the API's words),
 * then the domain's create rules (formats, required names, an end before its start). What needs
 * the server's records (a lookup id, the team's constituent) is left to the server.
 */
export function validator(resource: Resource): (body: unknown, json?: string) => Problem | null {
  const rules = RULES[resource];
  const check = buildValidator({})({ schema: rules.body, httpPart: 'body' }) as unknown as ((data: unknown) => boolean) & { errors?: unknown[] };
  return (body, json = JSON.stringify(body)) => {
    if (Buffer.byteLength(json) > BODY_LIMIT) return { field: '-', code: 'payload_too_large', message: 'The row is over 64 KB as JSON; send less.' };
    try {
      if (!check(body)) throw fromValidation(check.errors as never, 'body');
      rules.validate(body as Values);
      return null;
    } catch (err) {
      if (err instanceof DomainError) return { field: err.field ?? '-', code: err.code, message: err.message };
      throw err;
    }
  };
}

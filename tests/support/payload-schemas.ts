import Ajv from 'ajv';
import { EVENT_TYPES_WITH_SCHEMAS } from '../../api/schemas/webhook-event-types.js';

/**
 * Validators of each webhook type's `data`, compiled from the schemas the catalog publishes
 * (GET /api/v1/webhook-event-types), not from a copy of them.
 */
const ajv = new Ajv.default({ allErrors: true, allowUnionTypes: true, strict: true });
const schemas = new Map(EVENT_TYPES_WITH_SCHEMAS.map((t) => [t.name as string, t.schema]));
// Compiled on first use: most test files build no envelope at all.
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** What is wrong with `data` as a payload of `type`: an empty list when it matches its schema. */
export function payloadErrors(type: string, data: unknown): string[] {
  const schema = schemas.get(type);
  if (!schema) return [`${type} is not in the catalog`];
  let validate = validators.get(type);
  if (!validate) validators.set(type, (validate = ajv.compile(schema)));
  if (validate(data)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(data)'} ${e.message}${e.params && 'additionalProperty' in e.params ? ` (${e.params.additionalProperty})` : ''}`);
}

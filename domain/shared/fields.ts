import { DomainError, invalidField, missingField, unknownField } from './errors.js';
import { stateCode } from './states.js';
import { parseDate, parseDateTime, parseEmail, parsePhone, parseTime } from './values.js';

/**
 * One table per resource describes its writable fields. The API builds its TypeBox schemas from
 * the same table (api/schemas/fields.ts), so a rule is written once.
 */
export type FieldRule =
  | { kind: 'string'; max?: number }
  | { kind: 'email' }
  | { kind: 'phone' }
  | { kind: 'state' }
  | { kind: 'date' }
  | { kind: 'datetime' }
  | { kind: 'time' }
  | { kind: 'int'; min?: number; max?: number }
  | { kind: 'number'; min?: number; /** `min` itself is refused: "greater than", not "at least". */ exclusiveMin?: boolean }
  | { kind: 'boolean' }
  /** An integer id of another record or lookup; its existence is checked by the command. */
  | { kind: 'ref' };

export type FieldSpec = Record<string, FieldRule & { description?: string; nullable?: boolean }>;

export type Values = Record<string, unknown>;

function typeName(rule: FieldRule): string {
  switch (rule.kind) {
    case 'int':
    case 'ref':
      return 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    default:
      return 'a string';
  }
}

/**
 * Bounds where a rule states none: whole numbers fit a 32-bit integer (every store and client
 * holds them exactly), other numbers stay below a trillion, which keeps cents exact in a double.
 */
export const INT_MAX = 2_147_483_647;
export const NUMBER_MAX = 1e12;

/** Normalises one value by its rule; throws invalid_field naming the field. */
export function normaliseValue(field: string, rule: FieldRule, value: unknown): unknown {
  if (value === null) return null;
  const wrongType = () => invalidField(field, `${field} must be ${typeName(rule)} or null.`);
  switch (rule.kind) {
    case 'boolean':
      if (typeof value !== 'boolean') throw wrongType();
      return value;
    case 'int':
    case 'ref': {
      if (typeof value !== 'number' || !Number.isInteger(value)) throw wrongType();
      const min = rule.kind === 'ref' ? 1 : rule.min;
      const max = rule.kind === 'ref' ? Number.MAX_SAFE_INTEGER : (rule.max ?? INT_MAX);
      if (min !== undefined && value < min) throw invalidField(field, `${field} must be at least ${min}.`);
      if (max !== undefined && value > max) throw invalidField(field, `${field} must be at most ${max}.`);
      return value;
    }
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType();
      if (rule.min !== undefined && rule.exclusiveMin && value <= rule.min) throw invalidField(field, `${field} must be greater than ${rule.min}.`);
      if (rule.min !== undefined && value < rule.min) throw invalidField(field, `${field} must be at least ${rule.min}.`);
      if (Math.abs(value) > NUMBER_MAX) throw invalidField(field, `${field} must be at most ${NUMBER_MAX}.`);
      return value;
  }
  if (typeof value !== 'string') throw wrongType();
  switch (rule.kind) {
    case 'string': {
      // Characters are code points; a string of at most `max` UTF-16 units has at most that many.
      if (rule.max === undefined || value.length <= rule.max) return value;
      const length = [...value].length;
      if (length > rule.max) throw invalidField(field, `${field} must be at most ${rule.max} characters (got ${length}).`);
      return value;
    }
    case 'email': {
      const v = parseEmail(value);
      if (v === null) throw invalidField(field, `${field} must be a valid email address, like name@example.org.`);
      return v;
    }
    case 'phone': {
      const v = parsePhone(value);
      if (v === null) throw invalidField(field, `${field} must be a 10-digit US phone number, like 555-867-5309.`);
      return v;
    }
    case 'state': {
      const v = stateCode(value);
      if (v === null) throw invalidField(field, `${field} must be a US state name or 2-letter code, like Ohio or OH.`);
      return v;
    }
    case 'date': {
      const v = parseDate(value);
      if (v === null) throw invalidField(field, `${field} must be a real calendar date in the form YYYY-MM-DD.`);
      return v;
    }
    case 'datetime': {
      const v = parseDateTime(value);
      if (v === null) throw invalidField(field, `${field} must be an ISO date-time, like 2026-05-01T18:30:00 (UTC unless an offset is given).`);
      return v;
    }
    case 'time': {
      const v = parseTime(value);
      if (v === null) throw invalidField(field, `${field} must be a time like 18:00 or 6:00 PM.`);
      return v;
    }
  }
}

/**
 * Checks every sent field against the table: unknown names are unknown_field, values are
 * normalised. Returns only the fields that were sent.
 */
export function normaliseFields(spec: FieldSpec, input: Values, readOnly: readonly string[] = []): Values {
  const out: Values = {};
  for (const field of Object.keys(input)) {
    const value = input[field];
    // Own entries only: `constructor` or `toString` are not fields.
    const rule = Object.hasOwn(spec, field) ? spec[field] : undefined;
    if (!rule) {
      throw readOnly.includes(field)
        ? unknownField(field, `${field} is read-only; remove it from the request body.`)
        : unknownField(field);
    }
    if (value === undefined) continue;
    if (value === null && rule.nullable === false) throw invalidField(field, `${field} cannot be null.`);
    out[field] = normaliseValue(field, rule, value);
  }
  return out;
}

/** A field that must be present and non-empty after a change. */
export function requireText(values: Values, field: string, message?: string): void {
  const v = values[field];
  if (v === undefined) throw missingField(field, message);
  if (v === null || (typeof v === 'string' && v.trim() === '')) throw invalidField(field, message ?? `${field} cannot be empty.`);
}

/** The fields of `patch` whose value differs from `current` (an absent current value is null). */
export function changedFields(current: Values, patch: Values): Values {
  const out: Values = {};
  for (const [k, v] of Object.entries(patch)) if ((current[k] ?? null) !== v) out[k] = v;
  return out;
}

export function isDomainError(e: unknown): e is DomainError {
  return e instanceof DomainError;
}

import { type TSchema, Type } from '@sinclair/typebox';
import { type FieldRule, type FieldSpec, INT_MAX, NUMBER_MAX } from '../domain/shared/fields.js';

/** `T or null`, as one JSON Schema type list (OpenAPI 3.1), which Ajv and fast-json-stringify both read natively. */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<T['static'] | null>({ ...rest, type: [type, 'null'] });
}

const FORMAT_NOTE: Partial<Record<FieldRule['kind'], string>> = {
  email: 'email address',
  phone: '10-digit US number; punctuation is stripped',
  state: 'US state name or 2-letter code; stored as the code',
  date: 'YYYY-MM-DD',
  datetime: 'ISO date-time; UTC unless an offset is given; read back as YYYY-MM-DDTHH:MM:SS UTC',
  time: '18:00 or 6:00 PM; stored as HH:MM',
};

/** The JSON Schema of one field rule (types only; the domain normalises and checks the rest). */
export function schemaOf(rule: FieldRule & { description?: string }): TSchema {
  const description = [rule.description, FORMAT_NOTE[rule.kind]].filter(Boolean).join('; ') || undefined;
  switch (rule.kind) {
    case 'int':
      return Type.Integer({ minimum: rule.min, maximum: rule.max ?? INT_MAX, description });
    case 'ref':
      return Type.Integer({ minimum: 1, description });
    case 'number':
      return Type.Number({ ...(rule.exclusiveMin ? { exclusiveMinimum: rule.min } : { minimum: rule.min }), maximum: NUMBER_MAX, description });
    case 'boolean':
      return Type.Boolean({ description });
    case 'string':
      return Type.String({ maxLength: rule.max, description });
    default:
      return Type.String({ description });
  }
}

/**
 * A write body: every writable field optional, nothing else allowed; a field takes null (to
 * clear it) exactly when the domain's table lets it (`nullable: false` refuses null), so the
 * OpenAPI document says what the server accepts. Its static type is a record of unknown values,
 * the domain's `Values`: the domain normalises and checks each field by the same table, so
 * handlers pass the typed body on without a cast.
 */
export function writeBody(spec: FieldSpec, required: string[] = []) {
  const props = Object.fromEntries(
    Object.entries(spec).map(([name, rule]) => {
      const s = rule.nullable === false ? schemaOf(rule) : Nullable(schemaOf(rule));
      return [name, required.includes(name) ? s : Type.Optional(s)];
    }),
  );
  return Type.Object(props, { additionalProperties: false });
}

/** A record as read: every field present, null when unset. */
export function readRecord(id: string, spec: FieldSpec, extra: Record<string, TSchema> = {}, description?: string) {
  const props: Record<string, TSchema> = {
    [id]: Type.Integer(),
    FkTeam: Type.Integer(),
    ...Object.fromEntries(Object.entries(spec).map(([name, rule]) => [name, Nullable(schemaOf(rule))])),
    ...extra,
    DateCreated: Type.String({ description: 'UTC date-time' }),
    DateLastModified: Type.String({ description: 'UTC date-time' }),
  };
  return Type.Object(props, { description });
}

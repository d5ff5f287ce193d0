import Ajv from 'ajv';

/**
 * Bodies are JSON and never coerced ("5" is not an integer), unknown fields are refused, not
 * stripped. Query strings and path parameters are text, so they are parsed into their types.
 * Fastify asks for a validator per plugin context, with the shared schemas known there.
 */
export function buildValidator(externalSchemas: unknown) {
  // Fastify asks once per plugin context, and each pair of Ajv instances would compile its
  // meta-schema and check every shared schema again, a large part of a start before /readyz can
  // answer. Contexts sharing the same schemas (the same objects) share one pair.
  const schemas = Object.values((externalSchemas ?? {}) as Record<string, object>);
  const known = built.find((b) => b.schemas.length === schemas.length && b.schemas.every((x, i) => x === schemas[i]));
  if (known) return known.compile;
  const compile = buildFor(schemas);
  // A few sets at most in a process (tests build many apps, mostly from the same schemas).
  if (built.length >= 8) built.shift();
  built.push({ schemas, compile });
  return compile;
}

const built: Array<{ schemas: object[]; compile: ReturnType<typeof buildFor> }> = [];

function buildFor(schemas: object[]) {
  // validateSchema off: the schemas are TypeBox's, valid by construction, and checking each
  // against the JSON Schema meta-schema first compiles that meta-schema in both instances, CPU a
  // start spends before /readyz can answer.
  const common = { allErrors: false, removeAdditional: false, useDefaults: true, allowUnionTypes: true, strict: false, validateSchema: false } as const;
  const body = new Ajv.default({ ...common, coerceTypes: false });
  const text = new Ajv.default({ ...common, coerceTypes: true });
  for (const schema of schemas) {
    body.addSchema(schema);
    text.addSchema(schema);
  }
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => (httpPart === 'body' ? body.compile(schema) : strictNumbers(schema, text.compile(schema))) as never;
}

type Validate = ((data: unknown) => boolean) & { errors?: unknown };

// decisions.md §4: numbers in query strings (and path parameters) are plain decimals.
const WHOLE = /^-?\d+$/;
const DECIMAL = /^-?(?:\d+(?:\.\d*)?|\.\d+)$/;

function numberKind(type: unknown): 'integer' | 'number' | null {
  const types = ([] as unknown[]).concat(type);
  if (types.includes('integer')) return 'integer';
  if (types.includes('number')) return 'number';
  return null;
}

/** Why a text value is not a plain decimal of its kind, or null when it is one. */
export function plainDecimalProblem(kind: 'integer' | 'number', v: string): string | null {
  if (kind === 'integer') {
    if (!WHOLE.test(v)) return 'must be a whole number';
    if (Math.abs(Number(v)) > Number.MAX_SAFE_INTEGER) return `must be at most ${Number.MAX_SAFE_INTEGER}`;
    return null;
  }
  if (!DECIMAL.test(v)) return 'must be a plain decimal number (digits, an optional "-" and one ".")';
  if (!Number.isFinite(Number(v))) return 'is too large';
  return null;
}

/**
 * Ajv coerces any text Number() reads: `0x10` would read record 16, `1e3` record 1000,
 * `Infinity` and `1e309` pass a `minimum`, and an id past 2^53 reads a neighbouring one. Numbers
 * in text are plain decimals, integers within the safe range, everything else invalid_field.
 */
function strictNumbers(schema: object, validate: Validate): Validate {
  const props = (schema as { properties?: Record<string, { type?: unknown; minimum?: number; maximum?: number }> }).properties ?? {};
  const numbers = Object.entries(props).flatMap(([name, p]) => {
    const kind = numberKind(p.type);
    return kind ? [{ name, kind, minimum: p.minimum, maximum: p.maximum }] : [];
  });
  if (!numbers.length) return validate;
  const checked: Validate = (data) => {
    for (const { name, kind, minimum, maximum } of numbers) {
      const v = (data as Record<string, unknown> | null)?.[name];
      if (typeof v !== 'string') continue;
      let bad = plainDecimalProblem(kind, v);
      // Past the safe range: name the parameter's own bound where it has one (limit 1..1000).
      if (bad && WHOLE.test(v)) {
        const negative = v.startsWith('-');
        if (negative && minimum !== undefined) bad = `must be at least ${minimum}`;
        else if (!negative && maximum !== undefined) bad = `must be at most ${maximum}`;
      }
      if (bad) {
        checked.errors = [{ keyword: 'plainDecimal', instancePath: `/${name}`, params: {}, message: bad }];
        return false;
      }
    }
    const ok = validate(data);
    checked.errors = validate.errors;
    return ok;
  };
  return checked;
}

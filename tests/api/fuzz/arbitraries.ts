import fc from 'fast-check';

/** The part of JSON Schema the route schemas use (read from the served OpenAPI document). */
export interface Schema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  $ref?: string;
}

export interface Operation {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** OpenAPI path, e.g. /api/v1/constituents/{id} */
  path: string;
  query: Array<{ name: string; schema: Schema }>;
  pathParams: string[];
  body: Schema | null;
}

/** Every operation of an OpenAPI 3 document, with its parameters and JSON body schema. */
export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths))
    for (const [method, op] of Object.entries<any>(methods)) {
      const params: any[] = op.parameters ?? [];
      ops.push({
        method: method.toUpperCase() as Operation['method'],
        path,
        query: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        pathParams: params.filter((p) => p.in === 'path').map((p) => p.name),
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
      });
    }
  return ops;
}

const digits = (n: number) => fc.array(fc.constantFrom(...'0123456789'), { minLength: n, maxLength: n }).map((d) => d.join(''));
const isoDate = fc.date({ min: new Date('1990-01-01'), max: new Date('2040-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));

/** Strings that look like what a field takes, so generated bodies get past the first check often. */
function plausibleString(name: string, s: Schema): fc.Arbitrary<string> {
  const d = `${name} ${s.description ?? ''}`;
  const max = Math.min(s.maxLength ?? 40, 40);
  const free = fc.string({ minLength: s.minLength ?? 0, maxLength: max });
  if (/Email/i.test(name)) return fc.oneof(fc.emailAddress(), free);
  if (/Phone|Fax/i.test(name)) return fc.oneof(digits(10), digits(11).map((x) => '1' + x.slice(1)), free);
  if (/YYYY-MM-DD|Date$|date$|From$|To$/i.test(d) && !/Time/.test(name)) return fc.oneof(isoDate, fc.constant('2026-02-30'), free);
  if (/DateTime/i.test(name)) return fc.oneof(fc.date({ min: new Date('2000-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((x) => x.toISOString()), free);
  if (/Time$/.test(name)) return fc.oneof(fc.constantFrom('18:00', '6:00 PM', '6 PM', '25:00', '00:00'), free);
  if (/State/.test(name)) return fc.oneof(fc.constantFrom('CA', 'ny', 'Texas', 'District of Columbia', 'PR', 'XX'), free);
  if (/Zip/.test(name)) return fc.oneof(digits(5), free);
  if (/Website|Url/i.test(name)) return fc.oneof(fc.webUrl(), free);
  return free;
}

/** A value of the schema's type (or one of its types), within its bounds most of the time. */
export function valueOf(name: string, s: Schema, depth = 0): fc.Arbitrary<unknown> {
  if (s.enum) return fc.constantFrom(...s.enum);
  if (s.const !== undefined) return fc.constant(s.const);
  const types = ([] as string[]).concat(s.type ?? 'string');
  return fc.oneof(
    ...types.map((t): fc.Arbitrary<unknown> => {
      switch (t) {
        case 'integer':
          return fc.oneof(fc.integer({ min: s.minimum ?? -3, max: Math.min(s.maximum ?? 40, 1_000_000) }), fc.integer({ min: 1, max: 12 }));
        case 'number':
          return fc.oneof(fc.integer({ min: 0, max: 10_000 }).map((c) => c / 100), fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true }));
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return depth > 2 ? fc.constant([]) : fc.array(valueOf(name, s.items ?? {}, depth + 1), { maxLength: 3 });
        case 'object':
          return depth > 2 ? fc.constant({}) : objectOf(s, depth + 1);
        default:
          return plausibleString(name, s);
      }
    }),
  );
}

/** Objects with each property present or not; `only` keeps the required ones and those named. */
export function objectOf(s: Schema, depth = 0, only?: string[]): fc.Arbitrary<Record<string, unknown>> {
  const props = Object.fromEntries(Object.entries(s.properties ?? {}).filter(([k]) => !only || only.includes(k) || s.required?.includes(k)));
  const model = Object.fromEntries(Object.entries(props).map(([k, p]) => [k, valueOf(k, p, depth)]));
  const required = (s.required ?? []).filter((k) => k in props);
  return fc.record(model, { requiredKeys: required }) as fc.Arbitrary<Record<string, unknown>>;
}

/** Values no field should take: wrong types, edge numbers, hostile text. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(5, -1, 0, 1.5, 1e308, -1e308, 2 ** 53 + 1, true, false, null, [], {}, [1, 'a'], { a: { b: 1 } }),
  fc.constantFrom('5', 'true', '', ' ', '0x10', 'Infinity', '1e309', 'NaN', '\u0000', '\ud800', '%ff', '<script>', "'; DROP TABLE x;--", '__proto__'),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.integer({ min: 51, max: 2000 }).map((n) => 'x'.repeat(n)),
  fc.constant('y'.repeat(70_000)),
);

/** Text that is not what a query parameter or path segment takes. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('0x10', 'Infinity', '-Infinity', '1e309', '1e3', 'NaN', '-0', '+5', '1.2.3', '.', '-', '', ' 5', '00', '9'.repeat(30), '-1', '0', 'true', 'null', '2026-02-30', '%', '%ff', '%E0%A4%A', '%00', '%2F', 'a%20b'),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent),
  fc.integer({ min: 90, max: 400 }).map((n) => '7'.repeat(n)),
);

/** A JSON body text that is not valid JSON, or not a JSON object. */
export const brokenJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', '{', '}', '{"a":}', '{"a" 1}', '{"a":1,}', '[1,2', 'nul', 'tru', '{"a":1}{"b":2}', '\ufeff{}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '[]', '"text"', '42', 'null', '['.repeat(5000), '{"a":' + '['.repeat(3000) + ']'.repeat(3000) + '}'),
  fc.string({ maxLength: 40 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
);

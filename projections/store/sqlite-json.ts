import type { Doc, JsonShape } from './port.js';
import { keptByColumn, type TablePlan } from './sqlite-schema.js';

/**
 * A single read answered as JSON text (ReadStore.getJson) from the row as storedDoc wrote it,
 * with no document made and nothing walking a schema: at a single read's rate, making the
 * document (docOf) and serialising it again cost more than the row's read. Each field reads as
 * docOf would read it: the stored JSON's value, else what its column holds, else null.
 *
 * Declared fields are copied as the text JSON.stringify wrote for them when the row was stored
 * (storedDoc), found by a scan of the stored JSON's first object: the same text JSON.stringify
 * writes for the value read back, which is what the response serialiser writes for a string, a
 * number or a boolean (fast-json-stringify's asString is JSON.stringify's escaping). The rest
 * (and a collection without declared fields) is parsed.
 */
export interface JsonView {
  /** The row's read: the stored JSON, then the columns the shape needs. */
  sql: string;
  read(row: unknown[]): { json: string; picked: unknown[] };
}

/** Where a field's value lies: its place among the declared fields, its name elsewhere, its column in the row (0 for none). */
interface Source {
  slot: number;
  name: string;
  column: number;
}

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

/** A value as the response serialiser writes it (a column's text or number, or a parsed value). */
const encode = (v: unknown): string => (v === undefined || v === null ? 'null' : typeof v === 'string' || typeof v === 'object' ? JSON.stringify(v) : String(v));

export function jsonView(plan: TablePlan, shape: JsonShape): JsonView {
  const columns = [...new Set([...shape.fields, ...shape.pick])].filter((f) => plan.columns.has(f));
  const sourceOf = (name: string): Source => ({ slot: plan.slots?.get(name) ?? -1, name, column: columns.indexOf(name) + 1 });
  const fields = shape.fields.map(sourceOf);
  const picks = shape.pick.map(sourceOf);
  // `"Name":`, after a comma for all but the first.
  const heads = shape.fields.map((f, i) => (i ? ',' : '{') + JSON.stringify(f) + ':');
  const slotCount = plan.slots?.size ?? 0;
  const needsRest = [...fields, ...picks].some((s) => s.slot < 0);
  const sql = `SELECT ${['doc', ...columns.map((f) => plan.columns.get(f)!)].join(', ')} FROM ${plan.table} WHERE _key = ?`;

  /** The value of a field found in neither the declared fields nor the rest: its column's, where it keeps one as it was. */
  const fromColumn = (row: unknown[], s: Source): unknown => (s.column > 0 && keptByColumn(row[s.column]) ? row[s.column] : undefined);
  const fromRest = (rest: Doc | null, row: unknown[], s: Source): unknown => (rest && Object.hasOwn(rest, s.name) ? rest[s.name] : fromColumn(row, s));

  /** Either form storedDoc writes, parsed: the way for a collection without declared fields, and for a text the scan cannot follow. */
  const parsed = (row: unknown[]) => {
    const stored = JSON.parse(row[0] as string) as Doc | [Doc, Doc?];
    const declared = Array.isArray(stored) ? stored[0] : null;
    const rest = Array.isArray(stored) ? (stored[1] ?? null) : stored;
    const value = (s: Source) => (declared && s.slot >= 0 && Object.hasOwn(declared, s.slot) ? declared[s.slot] : s.slot >= 0 ? fromColumn(row, s) : fromRest(rest, row, s));
    let json = '';
    for (let i = 0; i < fields.length; i++) json += heads[i] + encode(value(fields[i]));
    return { json: fields.length ? json + '}' : '{}', picked: picks.map((s) => value(s) ?? null) };
  };
  if (!plan.slots) return { sql, read: parsed };

  return {
    sql,
    read(row) {
      const text = row[0] as string;
      // `[{declared by place}]` or `[{declared by place},{rest by name}]` (storedDoc).
      const raw: Array<string | undefined> = new Array(slotCount);
      const after = text.charCodeAt(0) === OPEN_BRACKET && text.charCodeAt(1) === OPEN_BRACE ? scanSlots(text, 1, raw) : -1;
      if (after < 0) return parsed(row);
      const rest = needsRest && text.charCodeAt(after) === COMMA ? (JSON.parse(text.slice(after + 1, text.length - 1)) as Doc) : null;
      let json = '';
      for (let i = 0; i < fields.length; i++) {
        const s = fields[i];
        const r = s.slot >= 0 ? raw[s.slot] : undefined;
        json += heads[i] + (r !== undefined ? r : encode(s.slot >= 0 ? fromColumn(row, s) : fromRest(rest, row, s)));
      }
      const picked = picks.map((s) => {
        const r = s.slot >= 0 ? raw[s.slot] : undefined;
        return (r !== undefined ? JSON.parse(r) : s.slot >= 0 ? fromColumn(row, s) : fromRest(rest, row, s)) ?? null;
      });
      return { json: fields.length ? json + '}' : '{}', picked };
    },
  };
}

/**
 * The JSON text of each value of the object at `start` (storedDoc's declared fields, keyed by
 * their place), by place; answers the index after the object, or -1 where the text is not as
 * JSON.stringify writes such an object (no white space, keys of digits only): never read past its end.
 */
function scanSlots(text: string, start: number, out: Array<string | undefined>): number {
  let p = start + 1;
  if (text.charCodeAt(p) === CLOSE_BRACE) return p + 1;
  for (;;) {
    if (text.charCodeAt(p) !== QUOTE) return -1;
    let slot = 0;
    for (p++; text.charCodeAt(p) !== QUOTE; p++) {
      const digit = text.charCodeAt(p) - 48;
      if (!(digit >= 0 && digit <= 9)) return -1;
      slot = slot * 10 + digit;
    }
    p += 2;
    const end = valueEnd(text, p);
    if (end < 0) return -1;
    if (slot < out.length) out[slot] = text.slice(p, end);
    const next = text.charCodeAt(end);
    if (next === CLOSE_BRACE) return end + 1;
    if (next !== COMMA) return -1;
    p = end + 1;
  }
}

/** The index just after the JSON value that starts at `p`; -1 when the text ends first. */
function valueEnd(text: string, p: number): number {
  const c = text.charCodeAt(p);
  if (c === QUOTE) return stringEnd(text, p);
  const n = text.length;
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let e = p; e < n; e++) {
      const d = text.charCodeAt(e);
      if (d === QUOTE) {
        const end = stringEnd(text, e);
        if (end < 0) return -1;
        e = end - 1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return e + 1;
    }
    return -1;
  }
  let e = p + 1;
  while (e < n) {
    const d = text.charCodeAt(e);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET) return e;
    e++;
  }
  return -1;
}

/** The index just after the string whose opening quote is at `p` (the first quote after an even run of backslashes); -1 when unclosed. */
function stringEnd(text: string, p: number): number {
  let e = text.indexOf('"', p + 1);
  while (e > 0 && text.charCodeAt(e - 1) === BACKSLASH) {
    let b = e - 1;
    while (text.charCodeAt(b - 1) === BACKSLASH) b--;
    if ((e - b) % 2 === 0) break;
    e = text.indexOf('"', e + 1);
  }
  return e < 0 ? -1 : e + 1;
}

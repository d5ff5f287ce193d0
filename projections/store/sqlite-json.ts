import type { Doc, JsonShape } from './port.js';
import { keptByColumn, type TablePlan } from './sqlite-schema.js';

/**
 * A single read answered as JSON text (ReadStore.getJson) from the row as storedDoc wrote it:
 * the stored JSON parsed once, and the shape's fields written in their order straight from it,
 * with what the row's columns hold and null for what it lacks, as docOf would read them. No
 * document is made and nothing walks a schema: at a single read's rate, making the document
 * (docOf) and serialising it again cost more than the row's read.
 */
export interface JsonView {
  /** The row's read: the stored JSON, then the columns the shape needs. */
  sql: string;
  read(row: unknown[]): { json: string; picked: unknown[] };
}

/** Where a field's value lies: its place among the declared fields, its name elsewhere, its column in the row. */
interface Source {
  slot: number | undefined;
  name: string;
  column: number;
}

export function jsonView(plan: TablePlan, shape: JsonShape): JsonView {
  const columns = [...new Set([...shape.fields, ...shape.pick])].filter((f) => plan.columns.has(f));
  const sourceOf = (name: string): Source => ({ slot: plan.slots?.get(name), name, column: columns.indexOf(name) + 1 });
  const fields = shape.fields.map(sourceOf);
  const picks = shape.pick.map(sourceOf);
  // `"Name":`, after a comma for all but the first.
  const heads = shape.fields.map((f, i) => (i ? ',' : '{') + JSON.stringify(f) + ':');
  return {
    sql: `SELECT ${['doc', ...columns.map((f) => plan.columns.get(f)!)].join(', ')} FROM ${plan.table} WHERE _key = ?`,
    read(row) {
      const stored = JSON.parse(row[0] as string) as Doc | [Doc, Doc?];
      // Either form storedDoc writes: [declared by place, rest by name], or one object by name.
      const declared = Array.isArray(stored) ? stored[0] : null;
      const rest = Array.isArray(stored) ? (stored[1] ?? null) : stored;
      const value = (s: Source): unknown => {
        let v = s.slot !== undefined && declared ? declared[s.slot] : rest && Object.hasOwn(rest, s.name) ? rest[s.name] : undefined;
        if (v === undefined && s.column > 0 && keptByColumn(row[s.column])) v = row[s.column];
        return v;
      };
      let json = '';
      for (let i = 0; i < fields.length; i++) {
        const v = value(fields[i]);
        // JSON.stringify writes a string exactly as the response serialiser does (fast-json-stringify's asString).
        json += heads[i] + (v === undefined || v === null ? 'null' : typeof v === 'string' || typeof v === 'object' ? JSON.stringify(v) : String(v));
      }
      return { json: fields.length ? json + '}' : '{}', picked: picks.map((s) => value(s) ?? null) };
    },
  };
}

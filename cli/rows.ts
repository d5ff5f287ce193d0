import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { plainDecimalProblem } from '../validation/validator.js';
import type { FieldRule, FieldSpec } from '../domain/shared/fields.js';
import { CommandFailed, UsageError } from './errors.js';
import type { Problem } from './validate.js';

/** One data row of an import file: its number from 1, and its body or why it has none. */
export interface Row {
  n: number;
  body?: unknown;
  problem?: Problem;
  /** The body as JSON, made once when the row is checked: its size and its place in a batch's request. */
  json?: string;
}

export type Format = 'csv' | 'ndjson';

export function formatOf(file: string): Format {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.ndjson' || ext === '.jsonl') return 'ndjson';
  throw new UsageError(`${file}: import reads .csv or .ndjson files (one JSON body a line); rename the file to say which it is.`);
}

/**
 * The file's rows, one at a time: each row's body is checked and made JSON before the next is
 * read, so the bodies die young instead of all 100,000 living through every collection (the
 * CLI's garbage collector took 180-300 ms of an import's validation pass while it held them all).
 */
export function readRows(file: string, format: Format, bytes: Buffer, fields: FieldSpec): Iterable<Row> {
  return format === 'csv' ? csvRows(file, bytes, fields) : ndjsonRows(bytes);
}

/**
 * A cell as its field's type (decisions.md §13): text fields stay text, so `02134` and phone
 * digits keep their form; whole numbers and numbers as plain decimals; booleans true or false
 * (any case, as spreadsheets write TRUE). A cell that is not of its type stays text, so the
 * schema names the field and what it must be.
 */
export function typedCell(rule: FieldRule | undefined, cell: string): unknown {
  switch (rule?.kind) {
    case 'int':
    case 'ref':
      return plainDecimalProblem('integer', cell) === null ? Number(cell) : cell;
    case 'number':
      return plainDecimalProblem('number', cell) === null ? Number(cell) : cell;
    case 'boolean': {
      const lower = cell.toLowerCase();
      return lower === 'true' ? true : lower === 'false' ? false : cell;
    }
    default:
      return cell;
  }
}

/**
 * A header row of public field names, then one row a line; an empty cell omits its field. A quote
 * inside a cell that does not begin with one (`5'10" tall`, `"C"x`) is the cell's own text, as a
 * spreadsheet would read it, rather than an error that stops the whole file; a quoted cell still
 * holds commas, quotes ("") and line breaks, and a quote left open to the end is still refused.
 */
function* csvRows(file: string, bytes: Buffer, fields: FieldSpec): Generator<Row> {
  let records: Iterator<string[]>;
  try {
    records = recordsOf(bytes)[Symbol.iterator]();
  } catch (err) {
    throw new CommandFailed(`${file}: not readable as CSV: ${(err as Error).message}`);
  }
  const first = records.next();
  if (first.done) return;
  const header = first.value;
  const names = header.map((h) => h.trim());
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw new CommandFailed(`${file}: the header names ${JSON.stringify(twice)} twice; each column is one field.`);
  const rules = names.map((name) => (Object.hasOwn(fields, name) ? fields[name] : undefined));
  let n = 0;
  for (let next = records.next(); !next.done; next = records.next()) {
    const cells = next.value;
    n++;
    // A line with no values (a blank line, a spreadsheet's trailing ",,,") is no row, but keeps
    // its number, so row N stays the sheet's data row N.
    if (cells.every((cell) => cell.trim() === '')) continue;
    if (cells.length !== names.length) {
      yield { n, problem: { field: '-', code: 'invalid_field', message: `The row has ${cells.length} cells; the header has ${names.length}.` } };
      continue;
    }
    const body: Record<string, unknown> = {};
    for (let c = 0; c < cells.length; c++) {
      const cell = cells[c];
      if (cell === '') continue;
      // Defined, not assigned: a column headed `__proto__` is then a field the schema refuses
      // by name, as in an NDJSON body, instead of vanishing into the object's prototype. Only
      // that name needs it (Object.prototype's only setter), and defining is the slower way.
      if (names[c] === '__proto__') Object.defineProperty(body, names[c], { value: typedCell(rules[c], cell), enumerable: true, writable: true, configurable: true });
      else body[names[c]] = typedCell(rules[c], cell);
    }
    yield { n, body };
  }
}

/**
 * The file's records: csv-parse's (BOM dropped, rows of any length, a stray quote kept as text),
 * or, for a file with no quote at all whose lines all end alike (`\n`, or `\r\n`), the same
 * records split by line and comma, about six times faster: no cell can then hold a comma or a
 * line break, so the split is exact (tests/cli/rows.test.ts holds the two to the same records).
 */
export function csvRecords(bytes: Buffer): string[][] {
  return [...recordsOf(bytes)];
}

/**
 * How csv-parse reads an import file. Every line end ends a record, whichever came first: left to
 * itself, csv-parse takes the first line's end as the whole file's, so CRLF rows after an LF
 * header kept a \r in their last cell, and LF rows after a CRLF header ran together into one
 * record. \r\n comes before \r, as csv-parse's own detection orders them. Line breaks inside
 * a quoted cell stay the cell's own.
 */
export const CSV_OPTIONS = { bom: true, relax_column_count: true, relax_quotes: true, record_delimiter: ['\r\n', '\n', '\r'] };

/** csvRecords' records, a line at a time where the file is plain (csv-parse reads the whole file at once, here). */
function recordsOf(bytes: Buffer): Iterable<string[]> {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const end = plainEnd(text);
  return end ? plainLines(text, end) : parse(bytes, CSV_OPTIONS);
}

/** The records of a file with no quote and one kind of line end; null for any other. */
export function plainRecords(text: string): string[][] | null {
  const end = plainEnd(text);
  return end ? [...plainLines(text, end)] : null;
}

/** The line end of a file with no quote and one kind of line end, `\n` or `\r\n`; null for any other. */
function plainEnd(text: string): string | null {
  if (text.includes('"')) return null;
  if (!text.includes('\r')) return '\n';
  // Every \r before a \n and every \n after a \r, or csv-parse's own reading decides.
  const rest = text.replaceAll('\r\n', '');
  return rest.includes('\r') || rest.includes('\n') ? null : '\r\n';
}

/** A line's cells at a time; the file's last line end closes its last record, it does not open another. */
function* plainLines(text: string, end: string): Generator<string[]> {
  for (let at = 0; at < text.length; ) {
    let next = text.indexOf(end, at);
    if (next < 0) next = text.length;
    yield text.slice(at, next).split(',');
    at = next + end.length;
  }
}

/** One JSON body a line; line n is row n. Blank lines are no rows. */
function* ndjsonRows(bytes: Buffer): Generator<Row> {
  const lines = bytes.toString('utf8').replace(/^\uFEFF/, '').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() === '') continue;
    try {
      yield { n: i + 1, body: JSON.parse(line) };
    } catch (err) {
      yield { n: i + 1, problem: { field: '-', code: 'invalid_json', message: `The line is not valid JSON: ${(err as Error).message}.` } };
    }
  }
}

import { storedSearchText } from './search-text.js';
import type { CollectionDef, Doc, SortKey } from './port.js';

/**
 * How one collection lies in SQLite. The document is kept as JSON text; beside it, every field a
 * declared index, order or search names is copied into a column of its own (computed in JS at
 * write time, so writes parse nothing in SQL), and each declared search field set gets a column
 * of lower-cased search text with an FTS5 trigram index over it. The JSON leaves out what the row
 * holds anyway (storedDoc): a text or number a column holds, and a declared field that is null.
 */
export interface TablePlan {
  def: CollectionDef;
  /** The table's name, quoted. */
  table: string;
  /** Field to its column, quoted. */
  columns: Map<string, string>;
  /** The declared fields (CollectionDef.fields), each null: what a stored document lacks of them reads so. */
  blank: Doc | null;
  /** Each declared field's place in that list: its key in a stored document (storedDoc). */
  slots: Map<string, number> | null;
  searches: SearchPlan[];
  /** The statements that create the table, its indexes and search tables, in order. */
  ddl: string[];
  /** Triggers that note each changed row for its search tables (SearchPlan.pending); dropped during a bulk load. */
  triggers: string[];
  /**
   * The indexes only lists, searches and the API's look-ups read (declared orders, short-search
   * scans, and the look-ups of a collection no projector looks up: lookupsOutsideProjection),
   * never a projector's look-ups: dropped during a bulk load and built once at its end, which is
   * faster than keeping them row by row.
   */
  listIndexes: string[];
  /**
   * The look-up indexes of a collection no projector looks up (lookupsOutsideProjection): dropped
   * only by an offline bulk load (a rebuild, a prepare), whose file nothing reads until it is
   * whole, and built once at its end, sorted (at 100,000 constituents, 0.1 s of CPU against
   * 0.3 s for the e-mail look-up's index, whose rows come in random order). A live catch-up keeps
   * them: a batch's upsert by e-mail looks up while it runs.
   */
  lookupIndexes: string[];
}

export interface SearchPlan {
  fields: string[];
  /** The field set as the memory store keys it (fields joined by U+0001). */
  key: string;
  /** The lower-cased search text column, quoted. */
  column: string;
  /** The FTS5 table, quoted. */
  fts: string;
  /**
   * The rows changed since the FTS5 table was last brought up to date (syncSearch), quoted:
   * `row` (the rowid) and `old`, the text the FTS5 table still holds for it (null for none).
   * For every other rowid the FTS5 table holds exactly the row's current text.
   */
  pending: string;
  /**
   * Per team marker and one- or two-character string, how many rows held it at the last sync
   * (sqlite-grams.ts), quoted: `m`, `g`, `n`. It follows the rows exactly as the FTS5 table does,
   * and short searches read their totals from it.
   */
  grams: string;
  /** The equality fields whose values mark each row's search text (the team). */
  where: string[];
  /** The order of the searched list, and the index that serves short searches in it. */
  sort: SortKey[];
  scanIndex: string;
}

/**
 * The team (the `where` values of a search) written into the start of each row's search text as
 * one trigram per value: the search index then answers "this team's rows containing X", and its
 * total, without reading a row (`^"marker" AND "x"`). Integers from 0 to 2^36 are spelled as
 * three characters of the Private Use Area (U+E000-U+EFFF, 12 bits each); other values get no
 * marker, and their searches read the rows instead. Searches holding such characters go the
 * slow exact way (sqlite-query.ts), so the marker can never be matched by a search.
 */
export function markerOf(values: unknown[]): string | null {
  let m = '';
  for (const v of values) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= 2 ** 36) return null;
    const hi = Math.floor(v / 2 ** 24);
    const lo = v % 2 ** 24;
    m += String.fromCharCode(0xe000 + hi, 0xe000 + (lo >>> 12), 0xe000 + (lo & 0xfff));
  }
  return m;
}

/** The characters of marker a search's rows begin with when their team has one (3 per `where` field). */
export const markerLength = (s: Pick<SearchPlan, 'where'>): number => 3 * s.where.length;

/** Whether a search holds characters of the marker range. */
export const hasMarkerCharacters = (text: string): boolean => /[\ue000-\uefff]/.test(text);

export const quoteId = (s: string): string => `"${s.replace(/"/g, '""')}"`;
export const quoteText = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/** Tables the store keeps for itself; no collection may take these names. */
export const META_PREFIX = '_meta_';

/** A field's name as SQL may use it inside a JSON path: refused when it could change the path. */
export function checkFieldName(name: string): string {
  if (!name || name.includes('"') || name.includes('\0')) throw new Error(`unsupported field name ${JSON.stringify(name)}`);
  return name;
}

/** The SQL that reads a field of a row: its column, or the document's JSON. */
export function fieldExpr(plan: Pick<TablePlan, 'columns' | 'slots'>, field: string): string {
  return plan.columns.get(field) ?? `json_extract(doc, ${docPath(plan, field)})`;
}

/** The JSON path of a top-level field in a stored document (storedDoc), as an SQL literal. */
export function docPath(plan: Pick<TablePlan, 'slots'>, field: string): string {
  checkFieldName(field);
  if (!plan.slots) return quoteText(`$."${field}"`);
  const slot = plan.slots.get(field);
  return quoteText(slot === undefined ? `$[1]."${field}"` : `$[0]."${slot}"`);
}

/**
 * ORDER BY terms for a sort. Nulls go by an explicit `IS NULL` flag before each key (SQLite puts
 * them first ascending), and the same text serves the indexes built for declared orders, so the
 * planner matches them. The id is never null and needs no flag.
 */
export function orderTerms(plan: TablePlan, sort: SortKey[]): string[] {
  const terms: string[] = [];
  for (const k of sort) {
    const e = fieldExpr(plan, k.field);
    const dir = k.dir === 'asc' ? 'ASC' : 'DESC';
    if (k.field !== plan.def.idField) terms.push(`(${e} IS NULL) ${k.nulls === 'first' ? 'DESC' : 'ASC'}`);
    terms.push(`${e} ${dir}`);
  }
  return terms;
}

export function planOf(def: CollectionDef): TablePlan {
  if (def.name.startsWith(META_PREFIX)) throw new Error(`collection names starting "${META_PREFIX}" are reserved for the store`);
  const idAsc: SortKey[] = [{ field: def.idField, dir: 'asc' }];
  const orders = [...(def.sorts ?? []), ...(def.search ?? []).map((s) => ({ where: s.where ?? [], sort: s.sort ?? idAsc }))];
  const fields = new Set<string>([def.idField]);
  for (const ix of def.indexes ?? []) for (const f of ix) fields.add(f);
  for (const o of orders) for (const f of [...(o.where ?? []), ...o.sort.map((k) => k.field)]) fields.add(f);
  const columns = new Map([...fields].map((f) => [checkFieldName(f), quoteId(`f_${f}`)]));
  const base = def.name;
  const searches: SearchPlan[] = (def.search ?? []).map((s, i) => {
    s.fields.forEach(checkFieldName);
    (s.where ?? []).forEach(checkFieldName);
    const where = [...(s.where ?? [])];
    const scanIndex = quoteId(`${base}__scan${i}`);
    return {
      fields: [...s.fields],
      key: s.fields.join('\u0001'),
      column: quoteId(`s_${i}`),
      fts: quoteId(`${base}__fts${i}`),
      pending: quoteId(`${base}__pending${i}`),
      grams: quoteId(`${base}__grams${i}`),
      where,
      sort: s.sort ?? idAsc,
      scanIndex,
    };
  });
  const table = quoteId(base);
  const blank = def.fields ? Object.fromEntries(def.fields.map((f) => [f, null])) : null;
  const slots = def.fields ? new Map(def.fields.map((f, i) => [f, i])) : null;
  const plan: TablePlan = { def, table, columns, blank, slots, searches, ddl: [], triggers: [], listIndexes: [], lookupIndexes: [] };

  const cols = [...columns.values()];
  const texts = searches.map((s) => `${s.column} TEXT NOT NULL`);
  // Columns of no declared type keep each value's own type: 1 and '1' stay apart, as in memory.
  plan.ddl.push(`CREATE TABLE ${table} (_key TEXT PRIMARY KEY NOT NULL, ${[...cols, ...texts].join(', ')}, doc TEXT NOT NULL)`);
  // No index of the id alone: the key's own index finds a row by id (idEquals), and a second
  // one was as big again.
  const indexes: string[][] = [];
  const idTail = [columns.get(def.idField)!];
  for (const ix of def.indexes ?? []) {
    if (ix.length === 1 && ix[0] === def.idField) continue;
    // The id after the equality fields: a team's list in id order is read from the index as is.
    indexes.push([...ix.map((f) => columns.get(f)!), ...(ix.includes(def.idField) ? [] : idTail)]);
  }
  const lookups = indexes.length;
  for (const o of def.sorts ?? []) indexes.push([...(o.where ?? []).map((f) => columns.get(f)!), ...orderTerms(plan, o.sort)]);
  // The short-search scan indexes (built below) hold the search text after the list's order.
  const scans = searches.map((s, i) => [...s.where.map((f) => columns.get(f)!), ...orderTerms(plan, def.search![i].sort ?? idAsc), s.column]);
  const bare = (term: string) => term.replace(/ (ASC|DESC)$/, '');
  // A look-up index that begins a scan index is left out: the scan index serves its look-ups as
  // well (only during a bulk load, when the scan index waits for its end, would it be missed).
  const covered = (terms: string[]) => scans.some((scan) => terms.length < scan.length && terms.every((t, k) => bare(t) === bare(scan[k])));
  const seen = new Set<string>();
  indexes.forEach((terms, i) => {
    const text = terms.join(', ');
    if (seen.has(text) || (i < lookups && covered(terms))) return;
    seen.add(text);
    plan.ddl.push(`CREATE INDEX ${quoteId(`${base}__ix${i}`)} ON ${table} (${text})`);
    if (i >= lookups) plan.listIndexes.push(plan.ddl[plan.ddl.length - 1]);
    else if (def.lookupsOutsideProjection) plan.lookupIndexes.push(plan.ddl[plan.ddl.length - 1]);
  });
  searches.forEach((s, i) => {
    // The short-search scan reads this index alone (it holds the text), in the list's order.
    plan.ddl.push(`CREATE INDEX ${s.scanIndex} ON ${table} (${scans[i].join(', ')})`);
    plan.listIndexes.push(plan.ddl[plan.ddl.length - 1]);
  });
  searches.forEach((s, i) => {
    // External content: the text lives once, in the table; case_sensitive because it is
    // lower-cased in JS already, exactly as the memory store folds it. No column sizes: they
    // serve only ranking, which no search does.
    plan.ddl.push(
      // Without FTS5's secure-delete: it made each update or delete of a row 100 times dearer
      // on a million-row index. A deleted row's grams stay in older segments until they are
      // merged; an erasure merges the whole index (optimizeSearchTables, sqlite-search-sync.ts).
      `CREATE VIRTUAL TABLE ${s.fts} USING fts5(${s.column}, content=${quoteText(base)}, content_rowid='rowid', tokenize='trigram case_sensitive 1', columnsize=0)`,
      `CREATE TABLE ${s.pending} (row INTEGER PRIMARY KEY, old TEXT)`,
      `CREATE TABLE ${s.grams} (m TEXT NOT NULL, g TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (m, g)) WITHOUT ROWID`,
    );
    // A write only notes the row (a small b-tree insert); the FTS5 table catches up in batches
    // (syncSearch), as maintaining it inside every write's transaction cost a third of the write
    // rate: each transaction flushed a segment of its own and merged segments. The first note of
    // a row keeps the text the FTS5 table holds for it, which its 'delete' needs.
    const trig = (suffix: string) => quoteId(`${base}__pending${i}_${suffix}`);
    // Not INSERT OR IGNORE: the statement firing a trigger imposes its own conflict policy on it.
    const note = (rowid: string, old: string) => `INSERT INTO ${s.pending} (row, old) SELECT ${rowid}, ${old} WHERE NOT EXISTS (SELECT 1 FROM ${s.pending} WHERE row = ${rowid})`;
    plan.triggers.push(
      `CREATE TRIGGER IF NOT EXISTS ${trig('ai')} AFTER INSERT ON ${table} BEGIN ${note('new.rowid', 'NULL')}; END`,
      `CREATE TRIGGER IF NOT EXISTS ${trig('ad')} AFTER DELETE ON ${table} BEGIN ${note('old.rowid', `old.${s.column}`)}; END`,
      `CREATE TRIGGER IF NOT EXISTS ${trig('au')} AFTER UPDATE OF ${s.column} ON ${table} WHEN old.${s.column} IS NOT new.${s.column} BEGIN ${note('old.rowid', `old.${s.column}`)}; END`,
    );
  });
  return plan;
}

/** A field's value as its column holds it: missing reads as null, booleans as 1 and 0. */
function columnValue(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'object') return JSON.stringify(v);
  return v;
}

/** The id as the key: get(c, 12) and get(c, '12') find the same document, as in memory. */
export function keyOf(plan: TablePlan, doc: Doc): string {
  const id = doc[plan.def.idField];
  if (id === undefined || id === null) throw new Error(`${plan.def.name}: document without ${plan.def.idField}`);
  return String(id);
}

/** The values of a row, in the order of `rowColumns`. */
export function rowOf(plan: TablePlan, doc: Doc): unknown[] {
  const row: unknown[] = [keyOf(plan, doc)];
  for (const f of plan.columns.keys()) row.push(columnValue(doc[f]));
  for (const s of plan.searches) row.push((s.where.length ? (markerOf(s.where.map((f) => doc[f])) ?? '') : '') + storedSearchText(doc, s.fields));
  row.push(storedDoc(plan, doc));
  return row;
}

export const rowColumns = (plan: TablePlan): string[] => ['_key', ...plan.columns.values(), ...plan.searches.map((s) => s.column), 'doc'];

/** A value its column gives back exactly as it was (a boolean reads as 1, -0 as 0, an object as its JSON). */
export const keptByColumn = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v) && !Object.is(v, -0));

/**
 * The document's JSON without what the row holds anyway: texts and numbers in a column, nulls of
 * declared fields. A collection with declared fields keeps `[declared, rest]`: the declared
 * fields keyed by their place in the list (a record's names were a third of its JSON), the others
 * by name (left out when there are none).
 */
export function storedDoc(plan: TablePlan, doc: Doc): string {
  const { slots } = plan;
  if (slots === null) {
    const kept: Doc = {};
    for (const k of Object.keys(doc)) {
      const v = doc[k];
      if (v === undefined || (v !== null && plan.columns.has(k) && keptByColumn(v))) continue;
      kept[k] = v;
    }
    return JSON.stringify(kept);
  }
  const { kept, keys, parts } = scratchOf(plan, slots.size);
  try {
    return slotted(plan, slots, doc, kept, keys, parts);
  } catch (err) {
    // A value JSON cannot write (a BigInt): the next call starts from empty arrays.
    kept.fill(undefined);
    parts.length = 0;
    throw err;
  }
}

function slotted(plan: TablePlan, slots: Map<string, number>, doc: Doc, kept: unknown[], keys: string[], parts: string[]): string {
  let rest: Doc | null = null;
  for (const k in doc) {
    if (!Object.hasOwn(doc, k)) continue;
    const v = doc[k];
    if (v === undefined) continue;
    const slot = slots.get(k);
    if (v === null ? slot !== undefined : plan.columns.has(k) && keptByColumn(v)) continue;
    if (slot !== undefined) kept[slot] = v;
    else (rest ??= {})[k] = v;
  }
  // Written as JSON.stringify writes an object keyed by place (places ascending, a value it
  // leaves out left out), without making that object: JSON.stringify of index keys was most of
  // a row's cost in a rebuild. The pieces are joined once (a string each appended made a
  // string a piece, the projector thread's most allocated a row), in arrays kept per plan.
  parts.push('[{');
  let first = true;
  for (let slot = 0; slot < kept.length; slot++) {
    const v = kept[slot];
    if (v === undefined) continue;
    kept[slot] = undefined;
    const json = JSON.stringify(v) as string | undefined;
    if (json === undefined) continue;
    parts.push(keys[first ? slot : slot + kept.length], json);
    first = false;
  }
  parts.push(rest ? `},${JSON.stringify(rest)}]` : '}]');
  const text = parts.join('');
  parts.length = 0;
  return text;
}

/**
 * Each plan's arrays for storedDoc, made once: the values by place (left empty after each use)
 * and the pieces of the text; with each place's key as written (`"3":`, then the same after a
 * comma, `,"3":`, at its place plus the count of places). storedDoc runs to its
 * end without awaiting, so one set a plan serves every call.
 */
const scratch = new WeakMap<TablePlan, { kept: unknown[]; keys: string[]; parts: string[] }>();
function scratchOf(plan: TablePlan, size: number): { kept: unknown[]; keys: string[]; parts: string[] } {
  let s = scratch.get(plan);
  if (!s) scratch.set(plan, (s = { kept: new Array(size).fill(undefined), keys: Array.from({ length: 2 * size }, (_, i) => (i < size ? `"${i}":` : `,"${i - size}":`)), parts: [] }));
  return s;
}

/** What to select to read documents back (docOf): the JSON, then every column. */
export const docColumns = (plan: Pick<TablePlan, 'columns'>): string => ['doc', ...plan.columns.values()].join(', ');

/**
 * A document from its row as docColumns reads it: the JSON (either form storedDoc writes), with
 * what the columns hold and the declared fields it lacks as null.
 */
export function docOf(plan: Pick<TablePlan, 'columns' | 'blank' | 'def'>, row: unknown[]): Doc {
  const stored = JSON.parse(row[0] as string) as Doc | [Doc, Doc?];
  const doc = Array.isArray(stored) ? fromSlots(plan.def.fields ?? [], stored) : stored;
  let i = 1;
  for (const field of plan.columns.keys()) {
    const v = row[i++];
    if (keptByColumn(v) && !Object.hasOwn(doc, field)) doc[field] = v;
  }
  if (plan.blank) for (const field in plan.blank) if (!Object.hasOwn(doc, field)) doc[field] = null;
  return doc;
}

function fromSlots(fields: readonly string[], [declared, rest]: [Doc, Doc?]): Doc {
  const doc: Doc = {};
  for (let i = 0; i < fields.length; i++) if (Object.hasOwn(declared, i)) doc[fields[i]] = declared[i];
  // Defined, not assigned: a field named __proto__ stays a field, as JSON.parse keeps it.
  if (rest) for (const k of Object.keys(rest)) Object.defineProperty(doc, k, { value: rest[k], enumerable: true, writable: true, configurable: true });
  return doc;
}

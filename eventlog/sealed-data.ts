import { PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import type { SealedParts } from './opened-cache.js';
import type { Sealer } from './sealing.js';

/**
 * How a constituent event's personal values are laid out sealed in the log (decisions.md §17),
 * and put back: the pure half of the sealing layer (sealed-log.ts), apart from its keys and caches.
 */
export type Data = Record<string, unknown>;

const PERSONAL: ReadonlySet<string> = new Set(PERSONAL_FIELDS);

const PARTS = ['fields', 'changes'] as const;
const PART_NAMES: ReadonlySet<string> = new Set(PARTS);

/** An event's data split for sealing (splitData): `plain` holds each part to seal and its values' JSON, in pairs. */
export interface Split {
  data: Data;
  parts: SealedParts | null;
  plain: string[];
}

/**
 * An event's data laid out as sealed: the personal values of `fields` and `changes` moved, one
 * sealed text per part, into `sealed`; the parts keep every field name, with null in place of a
 * sealed value, so one AES-GCM operation covers an event whatever the number of fields. Each
 * part's text is put in afterwards (fillSealed), sealed from its values' JSON (`plain`) on the
 * sealing thread or the main thread (sealed-turn.ts). `parts`: what is sealed (null: nothing
 * personal, the data as it was); `parts.appended`: the data itself, where it is what the log gives
 * back once its JSON is parsed (sealed-log.ts hands it to subscriptions).
 */
export function splitData(data: Data): Split {
  let out: Data | null = null;
  let parts: SealedParts | null = null;
  const plain: string[] = [];
  let exact = true;
  for (const key in data) {
    const v = data[key];
    if (v === undefined || (typeof v === 'object' && v !== null && !PART_NAMES.has(key)) || !jsonExact(v)) exact = false;
  }
  for (const part of PARTS) {
    const values = data[part];
    if (!values || typeof values !== 'object') continue;
    let hidden: Data | null = null;
    let shown: Data | null = null;
    // The part's own names, a dozen or so, rather than every personal field's name.
    for (const name in values as Data) {
      const v = (values as Data)[name];
      if (exact && (v === undefined || (typeof v === 'object' && v !== null) || !jsonExact(v))) exact = false;
      if (v === undefined || v === null || !PERSONAL.has(name)) continue;
      (hidden ??= {})[name] = v;
      (shown ??= { ...(values as Data) })[name] = null;
    }
    if (!hidden) continue;
    out ??= { ...data, sealed: {} };
    parts ??= { texts: {}, values: {} };
    out[part] = shown;
    parts.values[part] = hidden;
    plain.push(part, JSON.stringify(hidden));
  }
  if (parts && exact) parts.appended = data;
  return { data: out ?? data, parts, plain };
}

/** Puts a part's sealed text into the split data (splitData). */
export function fillSealed(split: Split, part: string, text: string): void {
  (split.data.sealed as Data)[part] = text;
  split.parts!.texts[part] = text;
}

/** Whether JSON gives back this scalar as it is: not a function or a symbol, not NaN, an infinity or -0 (all written as something else). */
function jsonExact(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  return typeof v !== 'function' && typeof v !== 'symbol' && typeof v !== 'bigint';
}

/** Whether the data holds a personal value that splitData would seal. */
export function carriesPersonal(data: Data): boolean {
  return PARTS.some((part) => {
    const values = data[part];
    return Boolean(values && typeof values === 'object' && PERSONAL_FIELDS.some((name) => (values as Data)[name] != null));
  });
}

/** The data as it was appended; `sealer` null (the key destroyed): the personal values stay null, and `erased: true`. */
export function openData(data: Data, sealer: Sealer | null, stream: string): Data {
  if (!sealer) {
    const { sealed: _, ...out } = data;
    return { ...out, erased: true };
  }
  return withValues(data, (part, text) => JSON.parse(sealer.openText(text, `${stream}:${part}`)) as Data);
}

/** The data without `sealed`, each sealed part's values (`valuesOf`) put back in their places. */
export function withValues(data: Data, valuesOf: (part: string, text: string) => Data): Data {
  const { sealed, ...out } = data as Data & { sealed: Record<string, string> };
  for (const part of PARTS) {
    const text = sealed[part];
    if (text) out[part] = { ...(out[part] as Data), ...valuesOf(part, text) };
  }
  return out;
}

export function holdsSealed(data: Data): boolean {
  return Boolean(data.sealed && typeof data.sealed === 'object');
}

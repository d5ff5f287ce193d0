import { existsSync } from 'node:fs';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PERSON_COPIES, PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import { standingAlone } from '../domain/shared/text.js';

/** How an erasure (runtime/erasure.ts) takes the person's values out of what is not rebuilt from the log: stored answers, another build's feed, mail files. */

const REDACTED_KEYS = new Set([...PERSONAL_FIELDS, ...PERSON_COPIES]);

type Json = Record<string, unknown>;

/** A value with each personal field (or linked copy) that holds one of `values` set to null; `nested`: also inside strings that hold JSON objects (a feed document's envelope). */
function redactor(values: ReadonlySet<string>, nested: boolean): (v: unknown) => unknown {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (nested && typeof v === 'string' && v.startsWith('{')) {
      try {
        return JSON.stringify(walk(JSON.parse(v)));
      } catch {
        return v;
      }
    }
    if (!v || typeof v !== 'object') return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = REDACTED_KEYS.has(k) && typeof x === 'string' && values.has(x) ? null : walk(x);
    return out;
  };
  return walk;
}

/**
 * The shortest value looked for inside other texts: a state's code or an initial ("IN", "A")
 * would be found in the words of every message and mail, which they do not name.
 */
const SHORTEST_NAMED = 3;

/**
 * The values of SHORTEST_NAMED characters or more, each as found standing alone in any case, the
 * longest first: a first name inside the e-mail that starts with it ("Vic" in vic@example.org)
 * must not be replaced before the e-mail is.
 */
const named = (values: Iterable<string>): RegExp[] =>
  [...values]
    .filter((v) => v.trim().length >= SHORTEST_NAMED)
    .sort((a, b) => b.length - a.length)
    .map((v) => standingAlone(v));

/**
 * A stored answer's JSON with each personal field (or linked copy) that holds an erased value set
 * to null, and each erased value that another text names (an error's message: "2 constituents
 * have Email1 x@example.org") replaced, in any case, by `[erased]`: where it stands alone, and
 * only a value of SHORTEST_NAMED characters or more, so that the words of unrelated answers stay.
 */
export function redactAnswer(values: ReadonlySet<string>): (body: string) => string {
  const fields = redactor(values, false);
  const scrub = scrubText([...values]);
  const texts = (v: unknown): unknown => {
    if (typeof v === 'string') return scrub(v);
    if (Array.isArray(v)) return v.map(texts);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, texts(x)]));
  };
  return (body) => {
    try {
      return JSON.stringify(texts(fields(JSON.parse(body))));
    } catch {
      return body;
    }
  };
}

/** A text with each erased value redactAnswer finds in other texts replaced by `[erased]` (a message's error in its delivery record). */
export function scrubText(values: readonly string[]): (text: string) => string {
  const found = named(values);
  return (text) => found.reduce((out, re) => out.replace(re, '[erased]'), text);
}

/**
 * Whether redactAnswer would change a stored answer (the answers an erasure rewrites): most are
 * ruled out by a search of their text for any value in any case, the rest redacted and compared.
 */
export function namesAnyInAnyCase(values: readonly string[]): (text: string) => boolean {
  const folded = values.filter((v) => v !== '').map((v) => JSON.stringify(v).slice(1, -1).toLowerCase());
  const redact = redactAnswer(new Set(values));
  return (text) => {
    const t = text.toLowerCase();
    return folded.some((v) => t.includes(v)) && redact(text) !== text;
  };
}

/** A read-model document redacted as redactAnswer does, within its fields that hold JSON text too (another build's feed envelopes). */
export function redactDocument(values: ReadonlySet<string>): <T extends Json>(doc: T) => T {
  const walk = redactor(values, true);
  return (doc) => walk(doc) as typeof doc;
}

/**
 * The embedded mail files (`<dataDir>/outbox/*.eml`) that name an erased e-mail address, in any
 * case (the composer writes its domain in lower case): each replaced where it stands alone, the
 * file swapped whole. A message holds no other personal value: its recipient's address is the
 * one thing of the person it names (commands/notifications/message.ts), the rest is the task's.
 * Read one at a time without blocking: the outbox grows with every notification ever sent.
 */
export async function scrubMail(dir: string, values: readonly string[]): Promise<void> {
  const addresses = named(values.filter((v) => v.includes('@')));
  if (!addresses.length || !existsSync(dir)) return;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.eml')) continue;
    const file = path.join(dir, name);
    const text = await readFile(file, 'utf8');
    const next = addresses.reduce((out, re) => out.replace(re, '[erased]'), text);
    if (next === text) continue;
    await writeFile(file + '.tmp', next, { mode: 0o600 });
    await rename(file + '.tmp', file);
  }
}

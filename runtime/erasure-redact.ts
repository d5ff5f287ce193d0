import { existsSync } from 'node:fs';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PERSON_COPIES, PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import { escapeRegExp, includesAnyCase, replaceAnyCase } from '../domain/shared/text.js';

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
 * A stored answer's JSON with each personal field (or linked copy) that holds an erased value set
 * to null, and each erased value that another text names (an error's message: "2 constituents
 * match Email1 x@example.org") replaced, in any case, by `[erased]`: where it stands alone, so
 * that a short value (a state's code) leaves the words it is part of as they were.
 */
export function redactAnswer(values: ReadonlySet<string>): (body: string) => string {
  const fields = redactor(values, false);
  const named = standingAlone([...values]);
  const texts = (v: unknown): unknown => {
    if (typeof v === 'string') return named.reduce((out, re) => out.replace(re, '[erased]'), v);
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

/** Each value, in any case, where no letter or digit stands right before or after it. */
const standingAlone = (values: readonly string[]): RegExp[] =>
  values.filter((v) => v.trim() !== '').map((v) => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(v)}(?![\\p{L}\\p{N}])`, 'giu'));

/** Whether a stored answer's text names one of the values as redactAnswer finds them (the answers an erasure redacts). */
export function namesAnyInAnyCase(values: readonly string[]): (text: string) => boolean {
  // As JSON writes them (quotes aside); most answers are ruled out by the cheap test first.
  const written = values.map((v) => JSON.stringify(v).slice(1, -1));
  const folded = written.filter((v) => v !== '').map((v) => v.toLowerCase());
  const named = standingAlone(written).map((re) => new RegExp(re.source, 'iu'));
  return (text) => {
    const t = text.toLowerCase();
    return folded.some((v) => t.includes(v)) && named.some((re) => re.test(text));
  };
}

/** A read-model document redacted as redactAnswer does, within its fields that hold JSON text too (another build's feed envelopes). */
export function redactDocument(values: ReadonlySet<string>): <T extends Json>(doc: T) => T {
  const walk = redactor(values, true);
  return (doc) => walk(doc) as typeof doc;
}

/**
 * The embedded mail files (`<dataDir>/outbox/*.eml`) that name an erased value, in any case: each
 * value replaced, the file swapped whole. Read one at a time without blocking: the outbox grows with
 * every notification ever sent.
 */
export async function scrubMail(dir: string, values: readonly string[]): Promise<void> {
  if (!values.length || !existsSync(dir)) return;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.eml')) continue;
    const file = path.join(dir, name);
    const text = await readFile(file, 'utf8');
    // In any case: the mail composer writes an address's domain in lower case.
    if (!values.some((v) => includesAnyCase(text, v))) continue;
    const next = values.reduce((out, v) => replaceAnyCase(out, v, '[erased]'), text);
    await writeFile(file + '.tmp', next, { mode: 0o600 });
    await rename(file + '.tmp', file);
  }
}


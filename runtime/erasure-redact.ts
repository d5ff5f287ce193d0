import { existsSync } from 'node:fs';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PERSON_COPIES, PERSONAL_FIELDS } from '../domain/constituent/rules.js';

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

/** A stored answer's JSON with each personal field (or linked copy) that holds an erased value set to null. */
export function redactAnswer(values: ReadonlySet<string>): (body: string) => string {
  const walk = redactor(values, false);
  return (body) => {
    try {
      return JSON.stringify(walk(JSON.parse(body)));
    } catch {
      return body;
    }
  };
}

/** A read-model document redacted as redactAnswer does, within its fields that hold JSON text too (another build's feed envelopes). */
export function redactDocument(values: ReadonlySet<string>): <T extends Json>(doc: T) => T {
  const walk = redactor(values, true);
  return (doc) => walk(doc) as typeof doc;
}

/**
 * The embedded mail files (`<dataDir>/outbox/*.eml`) that name an erased value: each value
 * replaced, the file swapped whole. Read one at a time without blocking: the outbox grows with
 * every notification ever sent.
 */
export async function scrubMail(dir: string, values: readonly string[]): Promise<void> {
  if (!values.length || !existsSync(dir)) return;
  for (const name of await readdir(dir)) {
    if (!name.endsWith('.eml')) continue;
    const file = path.join(dir, name);
    const text = await readFile(file, 'utf8');
    if (!values.some((v) => text.includes(v))) continue;
    let next = text;
    for (const v of values) next = next.split(v).join('[erased]');
    await writeFile(file + '.tmp', next, { mode: 0o600 });
    await rename(file + '.tmp', file);
  }
}


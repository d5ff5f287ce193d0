import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The bytes check's markers and scan (decisions.md §17): distinctive values of every personal field, looked for as raw bytes in every file of a data dir. */

/**
 * A letter per revision that no other text uses, each with a UTF-8 lead byte of its own: the
 * search index stores a gram whole only where the gram before it in its segment begins with
 * another byte (FTS5 prefix-compresses terms), so a gram of these alone shows the index held
 * on to an old text.
 */
const LETTER: Record<number, string> = { 1: 'ж', 2: 'ъ', 3: 'ψ' };

/** Distinctive values for every personal field; the state (a 2-letter code) cannot be one, so it is set but not scanned for. */
export function markers(tag: string, rev: number) {
  const m = (field: string) => `Mk${field}${tag}R${rev}`;
  const digits = (n: number) => `${7}${String(Number.parseInt(tag, 36) % 1e6).padStart(6, '0')}${rev}${n}${n}`.slice(0, 10);
  return {
    FirstName: m('First'),
    MiddleInitial: m('Mid'),
    LastName: `${m('Last')} ${LETTER[rev].repeat(5)}`,
    Nickname: m('Nick'),
    Salutation: m('Salut'),
    // Mixed case: the mail composer writes the domain in lower case, and the scan folds case.
    Email1: `MkEmail1${tag}R${rev}@Example.ORG`,
    Email2: `mkemail2${tag}r${rev}@example.org`,
    Phone1: digits(1),
    Phone2: digits(2),
    Phone3: digits(3),
    Website1: `https://mkweb${tag}r${rev}.example.org`,
    MailingAddressLine1: m('Addr1'),
    MailingAddressLine2: m('Addr2'),
    MailingCity: m('City'),
    MailingZipCode: m('Zip'),
    ConstituentDescription: m('Desc'),
    DateOfBirth: `19${String(10 + rev)}-0${rev + 1}-2${rev}`,
  };
}

/** Every value, as written and lower-cased (as the search text holds it), and the last name's gram of its own letter. */
export const scanned = (values: Record<string, string>) => [...Object.values(values).flatMap((v) => [v, v.toLowerCase()]), values.LastName.slice(-3)];

export function filesOf(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? filesOf(p) : [p];
  });
}

/** The bytes with ASCII's capitals made small: a copy found in another case (a mail composer folds an address's domain) is found too. */
function foldAscii(bytes: Buffer): Buffer {
  const out = Buffer.from(bytes);
  for (let i = 0; i < out.length; i++) if (out[i] >= 0x41 && out[i] <= 0x5a) out[i] |= 0x20;
  return out;
}

/** Which of `needles` occur in which files of the data dir, as raw bytes, in any case of their ASCII letters. */
export function scan(dir: string, needles: string[]): string[] {
  const hits: string[] = [];
  const files = filesOf(dir).map((f) => ({ f, bytes: foldAscii(readFileSync(f)) }));
  for (const n of new Set(needles)) for (const { f, bytes } of files) if (bytes.includes(foldAscii(Buffer.from(n, 'utf8')))) hits.push(`${n} in ${path.relative(dir, f)}`);
  return hits;
}

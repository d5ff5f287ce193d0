import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { and, type CollectionDef, type Doc, eq, type Query, searchFilter } from '../projections/store/port.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { percentile } from './lib.js';
import { FIRST, LAST, nameTerms, person, random } from './names.js';

/**
 * A micro-benchmark of the SQLite read store alone (issue 13): loads constituent-like documents
 * in bulk, then times the look-ups and searches the API makes. Not part of `npm run bench`.
 *
 *   npm run build && node dist/bench/readstore-sqlite.js [count=1000000]
 *
 * READSTORE_BENCH_DB=/some/file.sqlite keeps the loaded database there: a later run finding it
 * skips the load and the updates and times the reads alone (compare builds on the same data).
 */

const COUNT = Number(process.argv[2] ?? 1_000_000);
const TEAM = 1;
const BATCH = 10_000;
const SEARCH_FIELDS = ['ConstituentName', 'FirstName', 'LastName', 'Nickname', 'Email1', 'Email2'];
const def: CollectionDef = {
  name: 'constituents',
  idField: 'PkConstituent',
  indexes: [['FkTeam'], ['FkTeam', '_email1']],
  search: [{ fields: SEARCH_FIELDS, where: ['FkTeam'], sort: [{ field: 'PkConstituent', dir: 'asc' }] }],
};
/** Fields a constituent carries, mostly empty, so the documents weigh what real ones do. */
const EMPTY = ['Prefix', 'Suffix', 'Employer', 'Occupation', 'Phone2', 'MailingAddressLine2', 'FkDistrict', 'FkPrecinct', 'Notes', 'Birthdate'];

function constituent(i: number): Doc {
  const p = person(i);
  const doc: Doc = { PkConstituent: i, FkTeam: TEAM, ...p, ConstituentName: `${p.FirstName} ${p.LastName}`, Nickname: null, Email2: null };
  for (const f of EMPTY) doc[f] = null;
  doc.IsActiveConstituent = true;
  doc.DateCreated = '2024-05-01T12:00:00Z';
  doc._email1 = String(p.Email1).toLowerCase();
  doc._rev = 0;
  return doc;
}

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const rand = (n: number) => Math.floor(Math.random() * n);
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

function timed(runs: number, fn: (i: number) => unknown): { p50: number; p99: number; max: number } {
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn(i);
    t.push(ms(t0));
  }
  t.sort((a, b) => a - b);
  return { p50: percentile(t, 0.5), p99: percentile(t, 0.99), max: t[t.length - 1] };
}

const line = (what: string, r: { p50: number; p99: number; max: number }) =>
  console.log(`${what.padEnd(34)} p50 ${fmt(r.p50)} ms  p99 ${fmt(r.p99)} ms  max ${fmt(r.max)} ms`);

/** A substring of `len` characters of a name in the data, lower-cased as a user might not. */
function termOf(len: number): string {
  const names = Math.random() < 0.5 ? FIRST : LAST;
  const name = names[rand(names.length)];
  const at = rand(Math.max(1, name.length - len + 1));
  return name.slice(at, at + len);
}

const kept = process.env.READSTORE_BENCH_DB;
const dir = kept ? null : mkdtempSync(join(tmpdir(), 'turnout-readstore-bench-'));
const path = kept ?? join(dir!, 'readmodels.sqlite');
const loaded = kept !== undefined && existsSync(kept);
try {
  const core = new SqliteReadCore(path);
  core.define(def);
  if (!loaded) load(core);
  read(core);
  core.close();
} finally {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

function load(core: SqliteReadCore): void {
  // ---- load: large transactions, the search index built once at the end ----
  const cpu0 = process.cpuUsage();
  let t0 = process.hrtime.bigint();
  core.beginBulk(['constituents']);
  for (let from = 1; from <= COUNT; from += BATCH) {
    core.transaction(() => {
      for (let i = from; i < Math.min(from + BATCH, COUNT + 1); i++) core.put('constituents', constituent(i));
      core.setCheckpoint('constituents', { commit: BigInt(from), prepare: BigInt(from) });
    });
  }
  const rowsMs = ms(t0);
  t0 = process.hrtime.bigint();
  core.endBulk(['constituents']);
  const ftsMs = ms(t0);
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  console.log(`bulk load of ${COUNT} docs: ${fmt(rowsMs / 1000)} s rows + ${fmt(ftsMs / 1000)} s search index = ${fmt((COUNT / (rowsMs + ftsMs)) * 1000)} docs/s wall, ${fmt(COUNT / cpuS)} docs/s of CPU time`);

  // ---- steady state: updates one document per transaction vs 100 per transaction, search index kept by triggers ----
  const updates = Math.min(20_000, COUNT);
  t0 = process.hrtime.bigint();
  for (let k = 0; k < updates; k += 100) {
    core.transaction(() => {
      for (let j = 0; j < 100; j++) {
        const i = 1 + rand(COUNT);
        core.put('constituents', { ...constituent(i), LastName: 'Updated', ConstituentName: 'Someone Updated' });
      }
    });
  }
  console.log(`updates in batches of 100 (triggers on): ${fmt((updates / ms(t0)) * 1000)} docs/s`);

  core.db.pragma('wal_checkpoint(TRUNCATE)');
  console.log(`file size: ${fmt(statSync(path).size / 2 ** 20)} MiB`);
}

function read(core: SqliteReadCore): void {
  // ---- reads ----
  const emails = Array.from({ length: 2000 }, () => constituent(1 + rand(COUNT))._email1 as string);
  line('email look-up (team + _email1)', timed(emails.length, (i) => core.find({ collection: 'constituents', filter: and(eq('FkTeam', TEAM), eq('_email1', emails[i])), sort: [{ field: 'PkConstituent', dir: 'asc' }], page: { page: 1, pageSize: 50 } })));
  line('get by id', timed(5000, () => core.get('constituents', 1 + rand(COUNT))));
  const search = (text: string): Query => ({
    collection: 'constituents',
    filter: and(eq('FkTeam', TEAM), searchFilter(text, SEARCH_FIELDS, 'PkConstituent')),
    sort: [{ field: 'PkConstituent', dir: 'asc' }],
    page: { page: 1, pageSize: 50 },
  });
  const first = process.hrtime.bigint();
  const firstTotal = core.find(search(termOf(3))).total;
  console.log(`first search: ${fmt(ms(first))} ms (total ${firstTotal})`);
  let hits = 0;
  const terms3 = Array.from({ length: 300 }, () => termOf(3 + rand(3)));
  line('search of 3-5 characters, page+total', timed(terms3.length, (i) => (hits += core.find(search(terms3[i])).total)));
  console.log(`  (mean total ${fmt(hits / terms3.length)})`);
  hits = 0;
  // As bench/scale.ts asks them through the API (issue 13's figure): the same seed, the same terms.
  const names3 = nameTerms(400, [3], random(13));
  line('search of 3 characters (names), p+t', timed(names3.length, (i) => (hits += core.find(search(names3[i])).total)));
  console.log(`  (mean total ${fmt(hits / names3.length)})`);
  hits = 0;
  const terms12 = nameTerms(60, [1, 2], random(14));
  line('search of 1-2 characters, page+total', timed(terms12.length, (i) => (hits += core.find(search(terms12[i])).total)));
  console.log(`  (mean total ${fmt(hits / terms12.length)})`);
  line('all-digit search (id or text)', timed(200, () => core.find(search(String(1 + rand(COUNT))))));
  line('team list page 1000 by id', timed(50, () => core.find({ ...search(''), filter: eq('FkTeam', TEAM), page: { page: 1000, pageSize: 50 } })));
  const mem = process.memoryUsage();
  console.log(`RSS now ${fmt(mem.rss / 2 ** 20)} MiB, peak ${fmt(process.resourceUsage().maxRSS / 1024)} MiB, heap ${fmt(mem.heapUsed / 2 ** 20)} MiB`);
  console.log('(one run on a shared 2-core machine: the figures are noisy)');
}

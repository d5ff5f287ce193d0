import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import type { EventMetadata } from '../domain/shared/events.js';
import { jsonGivesBack } from '../eventlog/json-exact.js';
import { SqliteEventLog } from '../eventlog/sqlite.js';
import { SqliteIdempotencyStore } from '../runtime/idempotency/sqlite.js';
import { median } from './lib.js';

/**
 * Issue 29: what the embedded log's main thread pays a write to hand its followers the events it
 * appended. Appends of a constituent's create (its 25-odd fields) go through the group commit and
 * its writer thread, 64 (or 512, as a batch's items) in flight, with one follower that reads each
 * event; rounds alternate between data the log hands over as it is and the same data with a
 * leading undefined key in data and metadata (JSON writes the same text; the check stops at that
 * key, so the log parses the text back, as every write did before). The main thread's CPU is its
 * own scheduler time (/proc/self/task/<pid>/schedstat), not the writer thread's.
 * Then each hop alone: the check against the parse, a million times over the same text; and the
 * idempotency store's durable commit of a batch's ~500 KB answer (runtime/idempotency/sqlite.ts), on
 * its thread against the main thread.
 */
const N = Number(process.env.BENCH_HANDED_N ?? 4_000);
const ROUNDS = Number(process.env.BENCH_HANDED_ROUNDS ?? 6);

const mainThreadNs = (): number => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
const load = () => loadavg()[0].toFixed(1);

const FIELDS = {
  FirstName: 'Zoë', LastName: 'Okafor-Lindqvist', Email: 'zoe.okafor@example.org', Phone: '+44 20 7946 0958', Address1: '12 Rue de la Paix',
  Address2: null, City: 'Montréal', State: 'QC', Zip: 'H2X 1Y4', Country: 'CA', Employer: 'Acme', Occupation: 'Engineer',
  Notes: 'met at the fair — wants updates', Tags: null, DateOfBirth: '1990-04-01', Gender: null, Language: 'fr', Source: 'import',
  OptIn: true, OptInSms: false, Score: 17, Donations: 0, Volunteer: null, Title: null, Suffix: null,
};

function event(i: number, parsed: boolean): { type: string; data: Record<string, unknown>; metadata: EventMetadata } {
  const data = { id: i, fields: { ...FIELDS, Score: i } };
  const metadata: EventMetadata = { team: 1, source: 'Public API', keyName: 'bench', correlationId: `c${i}`, at: new Date(1_700_000_000_000 + i).toISOString(), revision: 1 };
  // A leading undefined key: the same JSON text, and the check gives up at once.
  if (parsed) return { type: 'ConstituentCreated', data: { _: undefined, ...data }, metadata: { _: undefined, ...metadata } as EventMetadata };
  return { type: 'ConstituentCreated', data, metadata };
}

async function round(log: SqliteEventLog, from: number, inFlight: number, parsed: boolean, followed: () => number): Promise<number> {
  const events = Array.from({ length: N }, (_, k) => event(from + k, parsed));
  const target = followed() + N;
  const t0 = mainThreadNs();
  let next = 0;
  const lane = async () => {
    while (next < N) {
      const k = next++;
      await log.append(`constituent-${from + k}`, [events[k]], 'no_stream');
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  while (followed() < target) await new Promise((r) => setImmediate(r));
  return (mainThreadNs() - t0) / N / 1_000;
}

async function appends(lines: string[]): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-handed-'));
  const log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
  let seen = 0;
  let ids = 0;
  const sub = log.subscribe(null, (e) => {
    ids += (e.data as { id: number }).id > 0 ? 1 : 0;
    seen++;
  });
  try {
    let from = 1;
    for (const inFlight of [64, 512]) {
      await round(log, from, inFlight, false, () => seen);
      from += N;
      const handed: number[] = [];
      const parsed: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (const p of r % 2 ? [true, false] : [false, true]) {
          (p ? parsed : handed).push(await round(log, from, inFlight, p, () => seen));
          from += N;
        }
      }
      const h = median(handed);
      const p = median(parsed);
      lines.push(
        `appends ${inFlight} in flight, ${ROUNDS}x${N} a side, main thread CPU a write (median): parsed back ${p.toFixed(1)} µs, handed ${h.toFixed(1)} µs, ` +
          `${(p - h).toFixed(1)} µs less (rounds: parsed ${parsed.map((x) => x.toFixed(1)).join(' ')}; handed ${handed.map((x) => x.toFixed(1)).join(' ')}) [load ${load()}]`,
      );
    }
  } finally {
    await sub.stop();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (ids !== seen) throw new Error('the follower missed an id');
}

function alone(lines: string[]): void {
  const data = event(7, false).data;
  const text = JSON.stringify(data);
  const meta = event(7, false).metadata;
  const metaText = JSON.stringify(meta);
  const M = 200_000;
  let sink = 0;
  const time = (f: () => void) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < M; i++) f();
    return Number(process.hrtime.bigint() - t0) / M / 1_000;
  };
  const parse: number[] = [];
  const check: number[] = [];
  for (let r = 0; r < 5; r++) {
    parse.push(time(() => (sink += (JSON.parse(text) as { id: number }).id + (JSON.parse(metaText) as { team: number }).team)));
    check.push(time(() => (sink += Number(jsonGivesBack(data)) + Number(jsonGivesBack(meta)))));
  }
  lines.push(`one event alone (data ${text.length} B, metadata ${metaText.length} B of JSON), wall a call, median of 5x${M}: parsed back ${median(parse).toFixed(2)} µs, the check ${median(check).toFixed(2)} µs [load ${load()}] (${sink > 0 ? 'ok' : ''})`);
}

/**
 * A batch's stored answer (~500 KB) and a small one kept durably, on the store's thread against
 * the same store's statements on the main thread (`program` null, as before the thread), rounds
 * alternated: wall to the answer, the event loop held meanwhile (eventLoopUtilization's active
 * time: what every other request waited), and the main thread's own CPU (schedstat).
 */
async function answers(lines: string[]): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-idem-'));
  const onThread = SqliteIdempotencyStore.open(dir);
  const here = new SqliteIdempotencyStore(new Database(path.join(dir, 'idempotency.sqlite')), 500, null);
  // A batch of 1,000 items' answer, as the import gets back: about 500 KB.
  const item = { status: 201, created: true, constituent: { Id: 1, ...FIELDS } };
  const body = JSON.stringify({ results: Array.from({ length: 1_000 }, (_, i) => ({ ...item, constituent: { ...item.constituent, Id: i } })) });
  const ways = { thread: onThread, here };
  type Figures = { wall: number[]; held: number[]; cpu: number[]; smallWall: number[]; smallHeld: number[] };
  const figures: Record<keyof typeof ways, Figures> = {
    thread: { wall: [], held: [], cpu: [], smallWall: [], smallHeld: [] },
    here: { wall: [], held: [], cpu: [], smallWall: [], smallHeld: [] },
  };
  try {
    await until(() => (onThread as unknown as { thread: { ready: boolean } | null }).thread?.ready === true);
    for (let r = 0; r < 12; r++) {
      for (const way of ['thread', 'here'] as const) {
        const store = ways[way];
        const f = figures[way];
        for (const b of [body, '{"results":[]}']) {
          const key = `k${r}-${way}-${b.length}`;
          await store.begin('bench', key, 'f', Date.now());
          const t0 = performance.now();
          const e0 = performance.eventLoopUtilization();
          const c0 = mainThreadNs();
          await store.complete('bench', key, { status: 200, body: b, headers: { 'content-type': 'application/json' } });
          const held = performance.eventLoopUtilization(e0).active;
          if (b === body) {
            f.wall.push(performance.now() - t0);
            f.held.push(held);
            f.cpu.push((mainThreadNs() - c0) / 1e6);
          } else {
            f.smallWall.push(performance.now() - t0);
            f.smallHeld.push(held);
          }
        }
      }
    }
  } finally {
    await onThread.close();
    await here.close();
    rmSync(dir, { recursive: true, force: true });
  }
  for (const way of ['here', 'thread'] as const) {
    const f = figures[way];
    lines.push(
      `a stored answer's durable commit (synchronous=FULL) ${way === 'here' ? 'on the main thread' : "on the store's thread"}, median of 12: ${(body.length / 1024).toFixed(0)} KB ` +
        `${median(f.wall).toFixed(2)} ms wall, event loop held ${median(f.held).toFixed(2)} ms, main-thread CPU ${median(f.cpu).toFixed(2)} ms; ` +
        `a 15 B answer ${median(f.smallWall).toFixed(2)} ms wall, held ${median(f.smallHeld).toFixed(2)} ms [load ${load()}]`,
    );
  }
}

const until = async (ready: () => boolean) => {
  while (!ready()) await new Promise((r) => setTimeout(r, 5));
};

export async function run(): Promise<{ name: string; lines: string[] }> {
  const lines: string[] = [];
  alone(lines);
  await appends(lines);
  await answers(lines);
  return { name: 'handed events (issue 29: the group commit hands followers the appended events)', lines };
}

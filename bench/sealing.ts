import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { EventLog, NewEvent } from '../eventlog/port.js';
import { SqliteKeyStore } from '../eventlog/keys.js';
import { SealingEventLog } from '../eventlog/sealed-log.js';
import { Sealer } from '../eventlog/sealing.js';
import { SqliteEventLog } from '../eventlog/sqlite.js';
import { median } from './lib.js';

/**
 * Issue 31 point 3: what sealing personal fields costs (decisions.md §17). The embedded stack
 * erases by rewriting its log in place and seals nothing; EventStoreDB's stack seals every
 * constituent's personal fields under its own key at the log port (eventlog/sealed-log.ts). That
 * decorator is measured here over the SQLite log, the same port: the write path (constituent
 * creations appended 64 at a time, as concurrent requests group-commit) and the feed's read rate
 * (the team's events read back in pages of 1,000, as the change feed reads them), plain against
 * sealed in alternated rounds of the same run, each on a fresh log. Target: at most 10% slower.
 */
const N = Number(process.env.BENCH_SEALING_N ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const IN_FLIGHT = 64;
const meta = { team: 1, source: 'Public API' as const, keyName: 'bench', correlationId: 'bench', at: '2026-11-27T08:00:00.000Z' };

const fields = (i: number) => ({
  FirstName: `First${i}`,
  LastName: `Last${i}`,
  ConstituentName: `First${i} Last${i}`,
  Email1: `person${i}@example.org`,
  Phone1: String(6170000000 + i),
  MailingAddressLine1: `${i} Main Street`,
  MailingCity: 'Boston',
  MailingState: 'MA',
  MailingZipCode: '02134',
  DateOfBirth: '1980-01-02',
  FkConstituentType: 1,
  IsActiveConstituent: true,
});

async function round(sealed: boolean): Promise<{ writes: number; reads: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-sealing-'));
  const inner = new SqliteEventLog(path.join(dir, 'log.sqlite'));
  const log: EventLog = sealed ? new SealingEventLog(inner, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), new Sealer(Sealer.newKey()))) : inner;
  try {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = next++; i < N; i = next++) {
          const e: NewEvent = { type: 'ConstituentCreated', data: { id: i + 1, fields: fields(i) }, metadata: meta };
          await log.append(`constituent-${i + 1}`, [e], 'no_stream');
        }
      }),
    );
    const writes = N / ((performance.now() - t0) / 1000);
    const t1 = performance.now();
    let read = 0;
    for (let from: { commit: bigint; prepare: bigint } | null = null; ; ) {
      const page = await log.readTeam!(1, from, 1_000);
      read += page.length;
      if (page.length < 1_000) break;
      from = page[page.length - 1].position;
    }
    if (read !== N) throw new Error(`read ${read} of ${N}`);
    return { writes, reads: read / ((performance.now() - t1) / 1000) };
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const plain: Array<{ writes: number; reads: number }> = [];
  const sealed: Array<{ writes: number; reads: number }> = [];
  await round(false); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate which goes first, so a drift of the machine favours neither.
    if (r % 2) {
      sealed.push(await round(true));
      plain.push(await round(false));
    } else {
      plain.push(await round(false));
      sealed.push(await round(true));
    }
  }
  const line = (what: 'writes' | 'reads', unit: string) => {
    const ratios = plain.map((p, i) => sealed[i][what] / p[what]);
    const cost = (1 - median(ratios)) * 100;
    return `${what === 'writes' ? 'write path' : 'feed read'}: plain ${median(plain.map((p) => p[what])).toFixed(0)} ${unit}, sealed ${median(sealed.map((s) => s[what])).toFixed(0)} ${unit}: cost ${cost.toFixed(1)}% (target at most 10%: ${cost <= 10 ? 'met' : 'MISSED'})`;
  };
  return { name: `sealing personal fields at the log port (${N} constituents, ${ROUNDS} alternated rounds, medians)`, lines: [line('writes', 'appends/s'), line('reads', 'events/s')] };
}

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type KeyStore, SqliteKeyStore } from '../../eventlog/keys.js';
import { SealingEventLog } from '../../eventlog/sealed-log.js';
import { type NewEvent, StreamNotRewritable } from '../../eventlog/port.js';
import { Sealer } from '../../eventlog/sealing.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { eventLogContract, until } from './eventlog.contract.js';
import { watchTeamFeed } from '../../runtime/team-feed.js';

/**
 * decisions.md §17, the production stack's design: personal fields sealed per constituent at the
 * log port, erasure by destroying the key. Run over the SQLite log here (the same port as
 * EventStoreDB's adapter), so the log contract holds through it too.
 */
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'turnout-sealed-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const main = new Sealer(Sealer.newKey());

function open(dir = tempDir()) {
  const inner = new SqliteEventLog(path.join(dir, 'log.sqlite'), { pollMs: 20 });
  const log = new SealingEventLog(inner, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main));
  return { dir, inner, log };
}

eventLogContract('SealingEventLog over SqliteEventLog', async () => {
  const { log } = open();
  return { log, cleanup: () => log.close() };
});

const meta = { team: 1, source: 'Public API' as const, keyName: 'k', correlationId: 'c', at: '2026-11-27T08:00:00.000Z' };
const created = (id: number, fields: Record<string, unknown>): NewEvent => ({ type: 'ConstituentCreated', data: { id, fields }, metadata: meta });
const updated = (id: number, changes: Record<string, unknown>): NewEvent => ({ type: 'ConstituentUpdated', data: { id, changes }, metadata: meta });
const bytesOf = (dir: string) => Buffer.concat(readdirSync(dir).map((f) => readFileSync(path.join(dir, f)))).toString('latin1');

describe('sealing a constituent\u2019s personal fields at the log port', () => {
  it('stores them sealed, reads them opened, and leaves other fields and streams as they are', async () => {
    const { dir, inner, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda', Email1: 'zelda@example.org', IsEmailOk: true, Phone1: null })], 'no_stream');
    await log.append('constituent-1', [updated(1, { LastName: 'Fitzgerald' })], 0n);
    await log.append('volunteer-1', [{ type: 'VolunteerCreated', data: { id: 1, fields: { FkConstituent: 1 } }, metadata: meta }], 'no_stream');
    const read = await log.readStream('constituent-1');
    expect(read.map((e) => e.data)).toEqual([
      { id: 1, fields: { FirstName: 'Zelda', Email1: 'zelda@example.org', IsEmailOk: true, Phone1: null } },
      { id: 1, changes: { LastName: 'Fitzgerald' } },
    ]);
    const raw = await inner.readStream('constituent-1');
    expect(raw[0].data).toEqual({
      id: 1,
      fields: { FirstName: null, Email1: null, IsEmailOk: true, Phone1: null },
      sealed: { fields: expect.stringMatching(/^sealed:v1:/) },
    });
    expect((await log.readTeam!(1, null, 10)).map((e) => e.data)).toEqual([...read.map((e) => e.data), { id: 1, fields: { FkConstituent: 1 } }]);
    // Over a log whose team read may trail (EventStoreDB's), the read from the log itself is opened too.
    const upTo = Object.assign(Object.create(inner) as SqliteEventLog, {
      readTeamUpTo: (team: number, from: null, _to: unknown, limit: number) => inner.readTeam(team, from, limit),
    });
    const trailing = new SealingEventLog(upTo, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main));
    const head = (await inner.head())!;
    expect((await trailing.readTeamUpTo!(1, null, head, 10)).map((e) => e.data)).toEqual([...read.map((e) => e.data), { id: 1, fields: { FkConstituent: 1 } }]);
    const seen: RecordedEvent[] = [];
    const sub = log.subscribe(null, (e) => void seen.push(e));
    await until('three events', () => seen.length === 3);
    await sub.stop();
    expect(seen[0].data).toEqual(read[0].data);
    await log.close();
    expect(bytesOf(dir)).not.toContain('Zelda');
    expect(bytesOf(dir)).not.toContain('Fitzgerald');
  });

  it('erases by destroying the key: every read, on any process, gives the fields null and erased: true; other constituents keep theirs', async () => {
    const { dir, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda', MailingCity: 'Montgomery' })], 'no_stream');
    await log.append('constituent-2', [created(2, { FirstName: 'Scott' })], 'no_stream');
    expect(await log.rewriteStream('constituent-1')).toBe(1);
    expect((await log.readStream('constituent-1'))[0].data).toEqual({ id: 1, fields: { FirstName: null, MailingCity: null }, erased: true });
    expect((await log.readStream('constituent-2'))[0].data).toEqual({ id: 2, fields: { FirstName: 'Scott' } });
    // Nothing personal may be written to it again: with its key gone it would lie there in plaintext.
    await expect(log.append('constituent-1', [{ type: 'ConstituentUpdated', data: { id: 1, changes: { FirstName: 'Zelda' } }, metadata: meta }], 'any')).rejects.toThrow(/erased/);
    // What holds no personal value still goes in (the erasure's own record).
    await log.append('constituent-1', [{ type: 'ConstituentErased', data: { id: 1, changes: { FirstName: null } }, metadata: meta }], 'any');
    await log.close();
    expect(bytesOf(dir)).not.toContain('Zelda');
    // Another process on the same files: the key is gone there too.
    const again = open(dir).log;
    expect((await again.readStream('constituent-1'))[0].data).toMatchObject({ fields: { FirstName: null }, erased: true });
    expect((await again.readStream('constituent-2'))[0].data).toMatchObject({ fields: { FirstName: 'Scott' } });
    await again.close();
  });

  it("rewrites another stream (a message's delivery record) through the log below where it can, and refuses it where it cannot (EventStoreDB)", async () => {
    const { log } = open();
    await log.append('notification-1', [{ type: 'NotificationFailed', data: { id: '1', error: 'gone@example.org refused' }, metadata: meta }], 'no_stream');
    expect(await log.rewriteStream('notification-1', (e) => ({ ...e.data, error: 'refused' }))).toBe(1);
    expect((await log.readStream('notification-1'))[0].data).toEqual({ id: '1', error: 'refused' });
    await log.close();
    // A log below that cannot rewrite (EventStoreDB's adapter has no rewriteStream).
    const { inner, log: over } = open();
    const immutable = new SealingEventLog(Object.assign(Object.create(inner) as SqliteEventLog, { rewriteStream: undefined }), new SqliteKeyStore(path.join(tempDir(), 'keys.sqlite'), main));
    await expect(immutable.rewriteStream('notification-1', (e) => e.data)).rejects.toBeInstanceOf(StreamNotRewritable);
    await over.close();
  });

  it('asks the key store once per page of events read, and once per burst of new constituents (their keys and the next ids\u2019 made together)', async () => {
    const { dir, log } = open();
    const asked: Array<{ subjects: number; create: boolean }> = [];
    const counting = (store: KeyStore): KeyStore => ({
      keyFor: (s, c) => store.keyFor(s, c),
      keysFor: (subjects, create) => {
        asked.push({ subjects: subjects.length, create });
        return store.keysFor(subjects, create);
      },
      destroy: (s) => store.destroy(s),
      close: () => store.close(),
    });
    const writer = new SealingEventLog(new SqliteEventLog(path.join(dir, 'log.sqlite')), counting(new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main)));
    await Promise.all(Array.from({ length: 64 }, (_, i) => writer.append(`constituent-${i + 1}`, [created(i + 1, { FirstName: `N${i + 1}` })], 'no_stream')));
    expect(asked).toEqual([{ subjects: 512, create: true }]);
    // Half way through the keys made ahead, the next ones are made without being waited for.
    await writer.append('constituent-257', [created(257, { FirstName: 'N257' })], 'no_stream');
    expect(asked).toEqual([
      { subjects: 512, create: true },
      { subjects: 256, create: true },
    ]);
    await writer.close();
    asked.length = 0;
    // A fresh process: nothing cached, one read for the page's 65 streams.
    const reader = new SealingEventLog(new SqliteEventLog(path.join(dir, 'log.sqlite')), counting(new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main)));
    const page = await reader.readTeam!(1, null, 100);
    expect(page.map((e) => (e.data as { fields: { FirstName: string } }).fields.FirstName)).toEqual([...Array.from({ length: 64 }, (_, i) => `N${i + 1}`), 'N257']);
    expect(asked).toEqual([{ subjects: 65, create: false }]);
    await reader.close();
    await log.close();
  });

  it('an erasure begun while a key is being fetched wins: the key fetched is not kept', async () => {
    const { dir, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    await log.close();
    const store = new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: KeyStore = {
      keyFor: (s, c) => store.keyFor(s, c),
      keysFor: async (subjects, create) => {
        const keys = await store.keysFor(subjects, create);
        await gate;
        return keys;
      },
      destroy: (s) => store.destroy(s),
      close: () => store.close(),
    };
    const other = new SealingEventLog(new SqliteEventLog(path.join(dir, 'log.sqlite')), slow);
    const reading = other.readStream('constituent-1');
    await other.rewriteStream('constituent-1');
    release();
    expect((await reading)[0].data).toMatchObject({ fields: { FirstName: null }, erased: true });
    expect((await other.readStream('constituent-1'))[0].data).toMatchObject({ fields: { FirstName: null }, erased: true });
    await other.close();
  });
});

describe('EventStoreDB\'s team projection through the sealing layer', () => {
  it('is checked at the start and reported, as on an unsealed log (runtime/team-feed.ts)', async () => {
    const { inner, log } = open();
    const checks: string[] = [];
    const feed = { check: async (report: (m: string) => void) => void (checks.push('check'), report('team projection stopped')), status: () => ({ name: 'team-feed', state: 'failed' as const }) };
    Object.assign(inner, { teamFeed: () => feed });
    const reports: string[] = [];
    const watch = await watchTeamFeed(new SealingEventLog(inner, new SqliteKeyStore(path.join(tempDir(), 'keys.sqlite'), main)), (m) => reports.push(m));
    expect(watch).not.toBeNull();
    expect(checks).toEqual(['check']);
    expect(reports).toEqual(['team projection stopped']);
    expect(watch!.status()).toEqual({ name: 'team-feed', state: 'failed' });
    watch!.stop();
    // A log with no team projection (the embedded one) has nothing to watch, sealed or not.
    expect(await watchTeamFeed(log, () => undefined)).toBeNull();
    await log.close();
  });
});

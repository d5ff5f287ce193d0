import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { type KeyStore, SqliteKeyStore } from '../../eventlog/keys.js';
import type { NewEvent } from '../../eventlog/port.js';
import { OpenedCache } from '../../eventlog/opened-cache.js';
import { KeyCache } from '../../eventlog/key-cache.js';
import { SealingEventLog } from '../../eventlog/sealed-log.js';
import { Sealer } from '../../eventlog/sealing.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { until } from './eventlog.contract.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * The sealing layer keeps the personal values of this process's own recent appends for its
 * subscriptions (the in-process projector and dispatcher), so they do not open what this process
 * has just sealed; an erased subject is never served from there (decisions.md §17).
 */
const tempDir = tempDirs('turnout-sealed-recent-');
afterEach(() => vi.restoreAllMocks());
const main = new Sealer(Sealer.newKey());
const meta = { team: 1, source: 'Public API' as const, keyName: 'k', correlationId: 'c', at: '2026-11-27T08:00:00.000Z' };
const created = (id: number, fields: Record<string, unknown>): NewEvent => ({ type: 'ConstituentCreated', data: { id, fields }, metadata: meta });
const updated = (id: number, changes: Record<string, unknown>): NewEvent => ({ type: 'ConstituentUpdated', data: { id, changes }, metadata: meta });

function open(dir = tempDir(), keys?: (store: KeyStore) => KeyStore, pollMs = 20) {
  const store = new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main);
  return { dir, log: new SealingEventLog(new SqliteEventLog(path.join(dir, 'log.sqlite'), { pollMs }), keys ? keys(store) : store) };
}

async function follow(log: SealingEventLog, count: number): Promise<RecordedEvent[]> {
  const seen: RecordedEvent[] = [];
  const sub = log.subscribe(null, (e) => void seen.push(e));
  await until(`${count} events`, () => seen.length >= count);
  await sub.stop();
  return seen;
}

describe('the personal values of this process\u2019s own appends, kept for its subscriptions', () => {
  it('gives its subscriptions what it appended without opening it, the same as a read that opens', async () => {
    const { log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda', Email1: 'zelda@example.org', IsEmailOk: true })], 'no_stream');
    await log.append('constituent-1', [updated(1, { LastName: 'Sayre' }), updated(1, { Phone1: '3345550100', IsEmailOk: false })], 0n);
    const opens = vi.spyOn(Sealer.prototype, 'openText');
    const seen = await follow(log, 3);
    expect(opens).not.toHaveBeenCalled();
    const read = await log.readStream('constituent-1');
    expect(opens).toHaveBeenCalledTimes(3);
    expect(seen.map((e) => e.data)).toEqual(read.map((e) => e.data));
    expect(seen[2].data).toEqual({ id: 1, changes: { Phone1: '3345550100', IsEmailOk: false } });
    await log.close();
  });

  it('hands its subscriptions the data it appended itself where JSON gives that back as it is, else the logged data with the values put back', async () => {
    const { log } = open();
    const plain = created(1, { FirstName: 'Zelda', Email1: 'zelda@example.org', IsEmailOk: true });
    // JSON leaves an undefined value out: the data appended is not what the log gives back.
    const odd = updated(1, { LastName: 'Sayre', Phone1: undefined, IsEmailOk: undefined });
    await log.append('constituent-1', [plain], 'no_stream');
    await log.append('constituent-1', [odd], 0n);
    const seen = await follow(log, 2);
    expect(seen[0].data).toBe(plain.data);
    expect(seen[1].data).not.toBe(odd.data);
    expect(seen[1].data).toStrictEqual({ id: 1, changes: { LastName: 'Sayre' } });
    expect(seen.map((e) => e.data)).toStrictEqual((await log.readStream('constituent-1')).map((e) => e.data));
    await log.close();
  });

  it('puts the values back once for every subscription handed the same logged event', async () => {
    // Woken by the commits alone, never by a poll: a poll between the writer's commit and its
    // answer reads the row from the file, another object than the one the log hands on.
    const { log } = open(undefined, undefined, 60_000);
    const seen: RecordedEvent[][] = [[], []];
    const subs = seen.map((into) => log.subscribe(null, (e) => void into.push(e)));
    // An undefined value each (JSON leaves it out), so the values are put back, not the data appended handed on.
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda', Email1: 'zelda@example.org', Phone1: undefined })], 'no_stream');
    await log.append('constituent-1', [updated(1, { LastName: 'Sayre', Phone1: undefined })], 0n);
    await until('both subscriptions to see both events', () => seen.every((s) => s.length >= 2));
    await Promise.all(subs.map((s) => s.stop()));
    // One object for both (the log gives its followers one event object), equal to what a read opens.
    expect(seen[0].map((e) => e.data)).toEqual((await log.readStream('constituent-1')).map((e) => e.data));
    seen[0].forEach((e, i) => expect(seen[1][i].data).toBe(e.data));
    await log.close();
  });

  it('lets go of an append\u2019s values once every subscription has taken them', async () => {
    // Kept until 4,096 appends later, they were promoted by the young generation's collections
    // under load (with the sealed texts and the data they came with), to die in the old one.
    const { log } = open(undefined, undefined, 60_000);
    const recent = (log as unknown as { recent: OpenedCache }).recent;
    const seen: RecordedEvent[][] = [[], []];
    const subs = seen.map((into) => log.subscribe(null, (e) => void into.push(e)));
    for (let i = 1; i <= 3; i++) await log.append(`constituent-${i}`, [created(i, { FirstName: `N${i}`, Phone1: undefined })], 'no_stream');
    await until('both subscriptions to see the appends', () => seen.every((s) => s.length >= 3));
    expect(recent.size).toBe(0);
    // Both were served from memory, one object for both.
    seen[0].forEach((e, i) => expect(seen[1][i].data).toBe(e.data));
    await subs[1].stop();
    const opens = vi.spyOn(Sealer.prototype, 'openText');
    await log.append('constituent-4', [created(4, { FirstName: 'N4' })], 'no_stream');
    await until('the subscription left to see it', () => seen[0].length >= 4);
    expect(opens).not.toHaveBeenCalled();
    expect(recent.size).toBe(0);
    await subs[0].stop();
    // A subscription that comes after the others took them opens the events: the same data.
    expect((await follow(log, 4)).map((e) => e.data)).toEqual(seen[0].map((e) => e.data));
    expect(opens).toHaveBeenCalledTimes(4);
    await log.close();
  });

  it('counts a subscription that stopped for good by itself (its handler threw) no longer, stopped or not', async () => {
    // The feed's waker drops a failed subscription without stopping it (dispatcher/feed-waker.ts).
    const { log } = open(undefined, undefined, 60_000);
    const recent = (log as unknown as { recent: OpenedCache }).recent;
    const errors: unknown[] = [];
    log.subscribe(
      null,
      () => {
        throw new Error('the handler failed');
      },
      { onError: (e) => void errors.push(e) },
    );
    const seen: RecordedEvent[] = [];
    const running = log.subscribe(null, (e) => void seen.push(e));
    await log.append('constituent-1', [created(1, { FirstName: 'N1', Phone1: undefined })], 'no_stream');
    await until('the failure', () => errors.length > 0);
    for (let i = 2; i <= 4; i++) await log.append(`constituent-${i}`, [created(i, { FirstName: `N${i}`, Phone1: undefined })], 'no_stream');
    await until('the running subscription to take every event', () => seen.length >= 4);
    expect(recent.size).toBe(0);
    await running.stop();
    await log.close();
  });

  it('serves a subscription that sees the events before their append is answered', async () => {
    const { log } = open();
    const seen: RecordedEvent[] = [];
    const sub = log.subscribe(null, (e) => void seen.push(e));
    // The log answers each append only once the subscription has its events, which a log may do
    // (the SQLite log wakes its followers as it commits).
    const inner = (log as unknown as { inner: SqliteEventLog }).inner;
    const write = inner.append.bind(inner);
    vi.spyOn(inner, 'append').mockImplementation(async (...args) => {
      const result = await write(...args);
      await until('the subscription to see the append', () => seen.some((e) => e.stream === args[0] && e.revision === result.nextExpectedRevision));
      return result;
    });
    const opens = vi.spyOn(Sealer.prototype, 'openText');
    for (let i = 1; i <= 5; i++) await log.append(`constituent-${i}`, [created(i, { FirstName: `N${i}` })], 'no_stream');
    await Promise.all(Array.from({ length: 5 }, (_, i) => log.append(`constituent-${i + 1}`, [updated(i + 1, { LastName: `L${i + 1}` })], 0n)));
    await sub.stop();
    expect(opens).not.toHaveBeenCalled();
    expect(seen.filter((e) => e.type === 'ConstituentUpdated').map((e) => e.data).sort((a, b) => Number(a.id) - Number(b.id))).toEqual(
      Array.from({ length: 5 }, (_, i) => ({ id: i + 1, changes: { LastName: `L${i + 1}` } })),
    );
    vi.restoreAllMocks();
    // A refused append leaves nothing to serve: the event at that revision is the one written before.
    await expect(log.append('constituent-1', [updated(1, { LastName: 'Refused' })], 0n)).rejects.toThrow();
    expect((await follow(log, 10)).find((e) => e.stream === 'constituent-1' && e.revision === 1n)?.data).toEqual({ id: 1, changes: { LastName: 'L1' } });
    await log.close();
  });

  it('opens what another process appended, and what its own cache no longer holds', async () => {
    const { dir, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    await log.close();
    const other = open(dir).log;
    const opens = vi.spyOn(Sealer.prototype, 'openText');
    expect((await follow(other, 1))[0].data).toEqual({ id: 1, fields: { FirstName: 'Zelda' } });
    expect(opens).toHaveBeenCalledTimes(1);
    await other.close();
  });

  it('serves no erased subject: its values are dropped at the erasure, while other subjects keep theirs', async () => {
    const { log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    await log.append('constituent-2', [created(2, { FirstName: 'Scott' })], 'no_stream');
    await log.rewriteStream('constituent-1');
    const seen = await follow(log, 2);
    expect(seen.map((e) => e.data)).toEqual([
      { id: 1, fields: { FirstName: null }, erased: true },
      { id: 2, fields: { FirstName: 'Scott' } },
    ]);
    await log.close();
  });

  it('an erasure begun while an append is under way wins: the append\u2019s values are not kept', async () => {
    let appended!: () => void;
    const landed = new Promise<void>((r) => (appended = r));
    const { log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    // The update's append is held after it is written, and the erasure runs meanwhile.
    const inner = (log as unknown as { inner: SqliteEventLog }).inner;
    const write = inner.append.bind(inner);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    vi.spyOn(inner, 'append').mockImplementation(async (...args) => {
      const result = await write(...args);
      appended();
      await gate;
      return result;
    });
    const updating = log.append('constituent-1', [updated(1, { LastName: 'Sayre' })], 0n);
    await landed;
    await log.rewriteStream('constituent-1');
    release();
    await updating;
    const seen = await follow(log, 2);
    expect(seen.map((e) => e.data)).toEqual([
      { id: 1, fields: { FirstName: null }, erased: true },
      { id: 1, changes: { LastName: null }, erased: true },
    ]);
    await log.close();
  });

  it('serves nothing kept once the key has left the cache: the key store then decides (another process erased it)', async () => {
    const { dir, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    // Another process destroys the key; this one has not read the erasure's record yet.
    const other = open(dir).log;
    await other.rewriteStream('constituent-1');
    await other.close();
    // The key leaves this process's cache (pushed out by 50,000 others), its kept values stay.
    (log as unknown as { cache: KeyCache }).cache.delete('constituent-1');
    expect((await follow(log, 1))[0].data).toEqual({ id: 1, fields: { FirstName: null }, erased: true });
    await log.close();
  });

  it('forgets a subject another process erased once its subscription reads the erasure', async () => {
    const { dir, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    await log.append('constituent-1', [updated(1, { LastName: 'Sayre' })], 0n);
    // Another process on the same files erases: the key goes, then the erasure's record.
    const other = open(dir).log;
    await other.rewriteStream('constituent-1');
    await other.append('constituent-1', [{ type: 'ConstituentErased', data: { id: 1, changes: { FirstName: null } }, metadata: meta }], 'any');
    await other.close();
    const seen: RecordedEvent[] = [];
    const sub = log.subscribe(null, (e) => void seen.push(e));
    await until('three events', () => seen.length >= 3);
    await sub.stop();
    // What came before the erasure's record was this process's own and was served as appended;
    // from the record on, nothing of the subject is served from memory.
    expect(seen[2].type).toBe('ConstituentErased');
    expect((await log.readStream('constituent-1')).map((e) => e.data)).toEqual([
      { id: 1, fields: { FirstName: null }, erased: true },
      { id: 1, changes: { LastName: null }, erased: true },
      { id: 1, changes: { FirstName: null } },
    ]);
    const again = await follow(log, 2);
    expect(again.slice(0, 2).map((e) => e.data)).toEqual([
      { id: 1, fields: { FirstName: null }, erased: true },
      { id: 1, changes: { LastName: null }, erased: true },
    ]);
    await log.close();
  });
});

describe("a process a moment behind another's erasure (the webhook worker's rebuild, dispatcher/worker.ts)", () => {
  it('opens the person as erased once it has read the erasure\'s own event from the team, though it held the key', async () => {
    const { dir, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'Zelda' })], 'no_stream');
    // This process holds the key; another erases (the key goes, then the erasure's record).
    const other = open(dir).log;
    await other.rewriteStream('constituent-1');
    const erasure = await other.append('constituent-1', [{ type: 'ConstituentErased', data: { id: 1, reason: null }, metadata: meta }], 'any');
    await other.close();
    (log as unknown as { recent: { drop(stream: string): void } }).recent.drop('constituent-1');
    // Before it reads the erasure, a page that stops short of it opens with the key it holds:
    // what the worker's rebuild would have sent.
    const before = await log.readTeam!(1, null, 1, true);
    expect(before[0].data).toEqual({ id: 1, fields: { FirstName: 'Zelda' } });
    // The worker reads the erasure's own event first (its position, as the queue records it).
    await log.readTeam!(1, erasure.position, 20, true);
    const after = await log.readTeam!(1, null, 1, true);
    expect(after[0].data).toEqual({ id: 1, fields: { FirstName: null }, erased: true });
    await log.close();
  });
});

describe('the keys kept in memory', () => {
  it('evicts the least recently used first, and never a key in use, while a hit seldom moves an entry', () => {
    const cache = new KeyCache(4);
    const sealers = Array.from({ length: 30 }, () => new Sealer(Sealer.newKey()));
    for (let i = 0; i < 4; i++) cache.set(`s${i}`, sealers[i]);
    // s0 is used between every insertion: it stays while the others are pushed out in order.
    for (let i = 4; i < 30; i++) {
      expect(cache.get('s0')).toBe(sealers[0]);
      cache.set(`s${i}`, sealers[i]);
    }
    expect(cache.get('s0')).toBe(sealers[0]);
    expect(['s1', 's2', 's3', 's26'].map((s) => cache.has(s))).toEqual([false, false, false, false]);
    expect(['s27', 's28', 's29'].map((s) => cache.get(s))).toEqual([sealers[27], sealers[28], sealers[29]]);
  });

  it('keeps its bound and its order past it many times over, its queue of the order bounded too', () => {
    const cache = new KeyCache(4);
    const used = new Sealer(Sealer.newKey());
    cache.set('used', used);
    for (let i = 0; i < 20_000; i++) {
      expect(cache.get('used')).toBe(used);
      cache.set(`s${i}`, used);
      if (i % 7 === 3) cache.delete(`s${i - 1}`);
    }
    expect(['used', 's19997', 's19998', 's19999'].map((s) => cache.has(s))).toEqual([true, true, true, true]);
    expect(cache.has('s19996')).toBe(false);
    const queued = (cache as unknown as { subjects: string[] }).subjects.length;
    expect(queued).toBeLessThanOrEqual(2 * 4 + 1_024);
  });
});

describe('the values of the latest appends kept', () => {
  it('keeps the last `max` set, the oldest going first, and drops what it is told to', () => {
    const cache = new OpenedCache(3);
    const parts = (n: number) => ({ texts: { fields: `t${n}` }, values: { fields: { FirstName: `N${n}` } } });
    const held = Array.from({ length: 10 }, (_, n) => parts(n));
    held.forEach((p, n) => cache.set(`constituent-${n}`, 0n, p));
    expect(cache.size).toBe(3);
    expect([6, 7, 8, 9].map((n) => cache.get(`constituent-${n}`, 0n, { fields: `t${n}` }) ?? null)).toEqual([null, held[7], held[8], held[9]]);
    cache.drop('constituent-8');
    cache.set('constituent-10', 0n, parts(10));
    cache.set('constituent-11', 0n, parts(11));
    // The oldest went first; the dropped one's place was taken without pushing out another.
    expect(cache.size).toBe(3);
    expect([7, 9, 10, 11].map((n) => cache.get(`constituent-${n}`, 0n, { fields: `t${n}` }) !== undefined)).toEqual([false, true, true, true]);
  });
});

import type { Db } from 'mongodb';
import { MongoServerError } from 'mongodb';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { ABANDONED_MS, BEAT_MS, MongoIdempotencyStore } from '../../runtime/idempotency/mongo.js';
import { type IdempotencyStore, STALE_MS, TTL_MS } from '../../runtime/idempotency/port.js';
import { SqliteIdempotencyStore } from '../../runtime/idempotency/sqlite.js';
import { InFlightRedaction } from '../../runtime/idempotency/in-flight.js';
import { namesAnyInAnyCase, redactAnswer } from '../../runtime/erasure-redact.js';

const answer = { status: 201, body: '{"created":true}', headers: { 'content-type': 'application/json' } };

describe('the embedded idempotency store', () => {
  it('starts once, reports running, then the kept answer, for 24 hours', async () => {
    const s = SqliteIdempotencyStore.open(':memory:');
    expect(await s.begin('key:1', 'k', 'f', 1000)).toEqual({ state: 'started' });
    expect(await s.begin('key:1', 'k', 'f', 1001)).toEqual({ state: 'running', fingerprint: 'f' });
    await s.complete('key:1', 'k', answer);
    expect(await s.begin('key:1', 'k', 'g', 1000 + TTL_MS - 1)).toEqual({ state: 'done', fingerprint: 'f', answer });
    expect(await s.begin('key:1', 'k', 'g', 1000 + TTL_MS)).toEqual({ state: 'started' });
    expect(await s.begin('key:2', 'k', 'f', 1000)).toEqual({ state: 'started' });
    await s.close();
  });

  it('hands a running key over at once when the process running it has died, not while it lives', async () => {
    const db = new Database(':memory:');
    const s = new SqliteIdempotencyStore(db);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!; // exited: no process has this pid now
    const ownedBy = (owner: number | string) => db.prepare('UPDATE idempotency_keys SET owner = ?').run(owner);
    expect(await s.begin('team:1', 'k', 'f', 1000)).toEqual({ state: 'started' });
    ownedBy(process.ppid); // alive: still running, until the stale time
    expect(await s.begin('team:1', 'k', 'f', 1001)).toEqual({ state: 'running', fingerprint: 'f' });
    ownedBy(dead);
    expect(await s.begin('team:1', 'k', 'f', 1002)).toEqual({ state: 'started' });
    expect(await s.begin('team:1', 'k', 'f', 1003)).toEqual({ state: 'running', fingerprint: 'f' });
    // This pid under another start: an earlier process that had the same pid (pid 1 in a restarted container).
    ownedBy(`${process.pid}/earlier`);
    expect(await s.begin('team:1', 'k', 'f', 1004)).toEqual({ state: 'started' });
    expect(await s.begin('team:1', 'k', 'f', 1005)).toEqual({ state: 'running', fingerprint: 'f' });
    await s.close();
  });

  it('takes keys without an fsync and commits the answers of one turn together, durably (on the main thread, without the store\u2019s thread)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-idem-'));
    try {
      const db = new Database(path.join(dir, 'idempotency.sqlite'));
      const s = new SqliteIdempotencyStore(db, 500, null);
      const settings = vi.spyOn(db, 'pragma');
      for (const k of ['a', 'b', 'c']) await s.begin('key:1', k, 'f', 1000);
      expect(Number(db.pragma('synchronous', { simple: true }))).toBe(1); // NORMAL while taking
      await Promise.all(['a', 'b', 'c'].map((k) => s.complete('key:1', k, answer)));
      expect(settings.mock.calls.filter(([p]) => p === 'synchronous = FULL')).toHaveLength(1);
      expect(Number(db.pragma('synchronous', { simple: true }))).toBe(1);
      await s.close();
      const again = SqliteIdempotencyStore.open(dir);
      expect(await again.begin('key:1', 'c', 'f', 2000)).toEqual({ state: 'done', fingerprint: 'f', answer });
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('commits what one turn asks in one transaction, in the order asked', async () => {
    const db = new Database(':memory:');
    const s = new SqliteIdempotencyStore(db);
    const transactions = vi.spyOn(db, 'transaction');
    // Racing requests with one key in one turn: exactly the first starts.
    const [first, second, other] = await Promise.all([s.begin('key:1', 'k', 'f', 1000), s.begin('key:1', 'k', 'f', 1000), s.begin('key:1', 'j', 'f', 1000)]);
    expect([first, second, other]).toEqual([{ state: 'started' }, { state: 'running', fingerprint: 'f' }, { state: 'started' }]);
    expect(transactions).toHaveBeenCalledTimes(1);
    // An answer, a release and a take of the released key, in one turn, in that order.
    const [, , , again] = await Promise.all([s.complete('key:1', 'k', answer), s.release('key:1', 'j'), s.begin('key:1', 'k', 'g', 1001), s.begin('key:1', 'j', 'g', 1001)]);
    expect(again).toEqual({ state: 'started' });
    expect(await s.begin('key:1', 'k', 'g', 1002)).toEqual({ state: 'done', fingerprint: 'f', answer });
    expect(transactions).toHaveBeenCalledTimes(3);
    await s.close();
  });

  it('frees a released key, and takes over one left running by a dead process', async () => {
    const s = SqliteIdempotencyStore.open(':memory:');
    await s.begin('a', 'k', 'f', 0);
    await s.release('a', 'k');
    expect(await s.begin('a', 'k', 'f', 1)).toEqual({ state: 'started' });
    expect(await s.begin('a', 'k', 'f', 1 + STALE_MS - 1)).toMatchObject({ state: 'running' });
    expect(await s.begin('a', 'k', 'f', 1 + STALE_MS)).toEqual({ state: 'started' });
    await s.close();
  });
});

/** A scripted collection: one document map, with MongoDB's duplicate-key error on insert. */
function scripted(options: { now?: () => number } = {}) {
  const docs = new Map<string, any>();
  const calls: unknown[][] = [];
  const matches = (d: any, f: any) => d && Object.entries(f).every(([k, v]: [string, any]) => (v?.$exists === false ? d[k] === undefined : d[k] === v));
  const collection = {
    createIndexes: async (specs: unknown) => void calls.push(['createIndexes', specs]),
    insertOne: async (d: any) => {
      calls.push(['insertOne', d._id]);
      if (docs.has(d._id)) throw new MongoServerError({ message: 'E11000 duplicate key', code: 11000 });
      docs.set(d._id, { ...d });
    },
    // A server's answer is a copy: a later write does not show through a document read before it.
    findOne: async (f: any) => (docs.has(f._id) ? structuredClone(docs.get(f._id)) : null),
    replaceOne: async (f: any, d: any) => {
      calls.push(['replaceOne', f]);
      if (!matches(docs.get(f._id), f)) return { modifiedCount: 0 };
      docs.set(f._id, { ...d });
      return { modifiedCount: 1 };
    },
    updateOne: async (f: any, u: any) => {
      const d = docs.get(f._id);
      if (!matches(d, f)) return;
      for (const [k, v] of Object.entries(u.$set)) {
        if (k === 'answer.body') d.answer = { ...d.answer, body: v };
        else d[k] = v;
      }
    },
    find: (f: any) => [...docs.values()].filter((d) => (f.answer?.$ne === null ? d.answer !== null : true)).map((d) => ({ ...d })),
    updateMany: async (f: any, u: any) => {
      calls.push(['updateMany', f]);
      for (const id of f._id.$in) if (matches(docs.get(id), { answer: f.answer })) Object.assign(docs.get(id), u.$set);
    },
    deleteOne: async (f: any) => void (matches(docs.get(f._id), f) && docs.delete(f._id)),
  };
  const db = { collection: () => collection } as unknown as Db;
  return { store: MongoIdempotencyStore.on(db, null, { beatMs: 3_600_000, ...options }), calls, docs };
}

describe('an erasure and the requests running through it (decisions.md §17)', () => {
  const personal = (email: string) => ({ status: 200, body: JSON.stringify({ constituent: { PkConstituent: 7, Email1: email, LastName: 'Keep' } }), headers: {} });
  const stale = (body: string) => body.includes('gone@example.org');
  const stored = async (store: SqliteIdempotencyStore, key: string) => {
    const begun = await store.begin('team:1', key, 'other-fingerprint', Date.now());
    return begun.state === 'done' ? JSON.parse(begun.answer.body) : begun.state;
  };

  it('redacts an answer stored after the erasure by a request that began before it, and leaves later requests alone', async () => {
    const inner = new SqliteIdempotencyStore(new Database(':memory:'));
    const store = new InFlightRedaction(inner);
    const now = Date.now();
    expect((await store.begin('team:1', 'before', 'f', now)).state).toBe('started');
    expect((await store.begin('team:1', 'released', 'f', now)).state).toBe('started');
    expect(await store.redact(stale, redactAnswer(new Set(['gone@example.org'])))).toBe(0);
    // The request that was running when the erasure redacted finishes with the person's values.
    await store.complete('team:1', 'before', personal('gone@example.org'));
    await store.release('team:1', 'released');
    // One that begins afterwards keeps what it answers (it ran on the rewritten stores).
    expect((await store.begin('team:1', 'after', 'f', now)).state).toBe('started');
    await store.complete('team:1', 'after', personal('gone@example.org'));

    expect((await stored(inner, 'before')).constituent).toEqual({ PkConstituent: 7, Email1: null, LastName: 'Keep' });
    expect((await stored(inner, 'after')).constituent.Email1).toBe('gone@example.org');
    await store.close();
  });

  it('redacts the stored answers a page a turn, letting the store answer other requests between pages', async () => {
    const store = new SqliteIdempotencyStore(new Database(':memory:'), 3);
    const now = Date.now();
    for (let i = 0; i < 10; i++) {
      expect((await store.begin(`team:${i % 2}`, `k${i}`, 'f', now)).state).toBe('started');
      await store.complete(`team:${i % 2}`, `k${i}`, personal(i % 3 ? 'kept@example.org' : 'gone@example.org'));
    }
    let tested = 0;
    const redacting = store.redact((body) => (tested++, stale(body)), redactAnswer(new Set(['gone@example.org'])));
    const meanwhile = store.begin('team:1', 'meanwhile', 'f', now).then(() => tested);
    expect(await redacting).toBe(4);
    expect(tested).toBe(10);
    // Answered after the first page, before the last.
    expect(await meanwhile).toBeLessThan(10);
    const emails = [];
    for (let i = 0; i < 10; i++) {
      const begun = await store.begin(`team:${i % 2}`, `k${i}`, 'other', now);
      emails.push(begun.state === 'done' ? JSON.parse(begun.answer.body).constituent.Email1 : begun.state);
    }
    expect(emails).toEqual(emails.map((_, i) => (i % 3 ? 'kept@example.org' : null)));
    await store.close();
  });

  it("redacts an erased value another answer's message names, in any case, and no word it is part of", async () => {
    // The upsert's 409 names the e-mail two records share (domain/constituent/upsert.ts); both are erased.
    const store = new SqliteIdempotencyStore(new Database(':memory:'));
    const now = Date.now();
    const answers: Record<string, string> = {
      ambiguous: JSON.stringify({ error: { code: 'ambiguous_match', message: '2 active constituents have Email1 Gone@Example.ORG; update one by id instead.' } }),
      name: JSON.stringify({ error: { code: 'validation_failed', message: 'Ann: no channel named so' } }),
      // JSON writes a newline as \n: the value follows a letter in the stored text, not in the message.
      escaped: JSON.stringify({ constituent: { PkConstituent: 9, ConstituentDescription: null, Note: 'Contact:\ngone@example.org' } }),
      // A short value (a state's code) is looked for in personal fields only, never inside other texts.
      words: JSON.stringify({ task: { VolunteerTaskTitle: 'Sign in at the desk', MailingState: 'IN' } }),
      other: JSON.stringify({ error: { code: 'ambiguous_match', message: '2 active constituents have Email1 kept@example.org; update one by id instead.' } }),
    };
    for (const [key, body] of Object.entries(answers)) {
      await store.begin('team:1', key, 'f', now);
      await store.complete('team:1', key, { status: 409, body, headers: {} });
    }
    const values = ['gone@example.org', 'Ann', 'IN'];
    expect(await store.redact(namesAnyInAnyCase(values), redactAnswer(new Set(values)))).toBe(4);
    expect((await stored(store, 'ambiguous')).error.message).toBe('2 active constituents have Email1 [erased]; update one by id instead.');
    expect((await stored(store, 'name')).error.message).toBe('[erased]: no channel named so');
    expect((await stored(store, 'escaped')).constituent.Note).toBe('Contact:\n[erased]');
    expect((await stored(store, 'words')).task).toEqual({ VolunteerTaskTitle: 'Sign in at the desk', MailingState: null });
    expect(await stored(store, 'other')).toEqual(JSON.parse(answers.other));
    // What no value is named in is not picked at all.
    expect(namesAnyInAnyCase(values)(JSON.stringify({ task: { VolunteerTaskTitle: 'Sign in at the desk' } }))).toBe(false);
    await store.close();
  });

  it('waits for an answer already on its way to the store, so the redaction rewrites it there', async () => {
    // A store whose writes land later than asked, as a MongoDB round trip does.
    const bodies = new Map<string, string>();
    const slow: IdempotencyStore = {
      begin: async () => ({ state: 'started' }),
      complete: (_scope, key, a) => new Promise((done) => setTimeout(() => done(void bodies.set(key, a.body)), 30)),
      release: async () => undefined,
      abandon: async () => undefined,
      redact: async (isStale, redact) => {
        let n = 0;
        for (const [key, body] of bodies) if (isStale(body)) (bodies.set(key, redact(body)), n++);
        return n;
      },
      close: async () => undefined,
    };
    const store = new InFlightRedaction(slow);
    await store.begin('team:1', 'racing', 'f', Date.now());
    const completing = store.complete('team:1', 'racing', personal('gone@example.org'));
    expect(await store.redact(stale, redactAnswer(new Set(['gone@example.org'])))).toBe(1);
    await completing;
    expect(JSON.parse(bodies.get('racing')!).constituent.Email1).toBeNull();
  });
});

describe('the MongoDB idempotency store', () => {
  it('redacts the stored answers an erasure picks, and only those (decisions.md §17)', async () => {
    const { store, docs } = scripted();
    await store.begin('team:1', 'a', 'f', Date.now());
    await store.complete('team:1', 'a', { status: 201, body: '{"FirstName":"Ada"}', headers: {} });
    await store.begin('team:1', 'b', 'f', Date.now());
    await store.complete('team:1', 'b', { status: 201, body: '{"FirstName":"Alan"}', headers: {} });
    await store.begin('team:1', 'c', 'f', Date.now());
    expect(await store.redact((b) => b.includes('Ada'), () => '{"FirstName":null}')).toBe(1);
    expect(docs.get('team:1\na').answer.body).toBe('{"FirstName":null}');
    expect(docs.get('team:1\nb').answer.body).toBe('{"FirstName":"Alan"}');
  });

  it('tries its index again after createIndexes failed once, instead of failing every later request', async () => {
    const { store, calls } = scripted();
    const collection = (store as unknown as { keys: { createIndexes: (s: unknown) => Promise<void> } }).keys;
    const create = collection.createIndexes;
    let failures = 1;
    collection.createIndexes = async (specs) => {
      if (failures-- > 0) throw new Error('connection reset');
      return create(specs);
    };
    await expect(store.begin('s', 'k', 'f', 1000)).rejects.toThrow('connection reset');
    expect(await store.begin('s', 'k', 'f', 1001)).toEqual({ state: 'started' });
    expect(await store.begin('s', 'k2', 'f', 1002)).toEqual({ state: 'started' });
    expect(calls.filter((c) => c[0] === 'createIndexes')).toHaveLength(1);
  });

  it('creates a TTL index on expiresAt, and starts with one insert', async () => {
    const { store, calls, docs } = scripted();
    expect(await store.begin('key:1', 'k', 'f', 1000)).toEqual({ state: 'started' });
    expect(calls[0]).toEqual(['createIndexes', [{ key: { expiresAt: 1 }, name: 'expires', expireAfterSeconds: 0 }]]);
    expect(docs.get('key:1\nk').expiresAt).toEqual(new Date(1000 + TTL_MS));
  });

  it('answers running, then the kept answer, until the TTL; then takes the key over', async () => {
    const { store } = scripted();
    await store.begin('s', 'k', 'f', 1000);
    expect(await store.begin('s', 'k', 'f', 1001)).toEqual({ state: 'running', fingerprint: 'f' });
    await store.complete('s', 'k', answer);
    expect(await store.begin('s', 'k', 'g', 2000)).toEqual({ state: 'done', fingerprint: 'f', answer });
    expect(await store.begin('s', 'k', 'g', 1000 + TTL_MS)).toEqual({ state: 'started' });
    expect(await store.begin('s', 'k', 'g', 1001 + TTL_MS)).toEqual({ state: 'running', fingerprint: 'g' });
  });

  it('releases only a running entry, and takes over an abandoned one conditionally', async () => {
    const { store, calls } = scripted();
    await store.begin('s', 'k', 'f', 0);
    expect(await store.begin('s', 'k', 'f', STALE_MS)).toEqual({ state: 'started' });
    expect(calls.find((c) => c[0] === 'replaceOne')).toEqual(['replaceOne', { _id: 's\nk', startedAt: 0, beatAt: 0, answer: null }]);
    await store.release('s', 'k');
    expect(await store.begin('s', 'k', 'f', STALE_MS + 1)).toEqual({ state: 'started' });
    await store.complete('s', 'k', answer);
    await store.release('s', 'k');
    expect(await store.begin('s', 'k', 'f', STALE_MS + 2)).toMatchObject({ state: 'done' });
  });

  it('keeps a running key while its process beats, and frees it once the beats stop, long before the stale time', async () => {
    let clock = 0;
    const { store: a, docs, calls } = scripted({ now: () => clock });
    const { store: b } = scripted();
    (b as unknown as { keys: unknown }).keys = (a as unknown as { keys: unknown }).keys; // two processes, one collection
    expect(await a.begin('s', 'k', 'f', 0)).toEqual({ state: 'started' });
    // Process a is alive: it beats, and b sees the key running past ABANDONED_MS since the start.
    for (clock = BEAT_MS; clock <= 4 * BEAT_MS; clock += BEAT_MS) await a.heartbeat();
    expect(await b.begin('s', 'k', 'f', 4 * BEAT_MS + 1)).toEqual({ state: 'running', fingerprint: 'f' });
    // Process a dies (no more beats): b takes the key over once its last beat is ABANDONED_MS old.
    expect(await b.begin('s', 'k', 'f', 4 * BEAT_MS + ABANDONED_MS - 1)).toMatchObject({ state: 'running' });
    expect(await b.begin('s', 'k', 'f', 4 * BEAT_MS + ABANDONED_MS)).toEqual({ state: 'started' });
    expect(ABANDONED_MS).toBeLessThan(STALE_MS);
    // A's later beat does not revive what b took over; b's own beat covers it, and a completed key stops beating.
    await b.complete('s', 'k', answer);
    calls.length = 0;
    await b.heartbeat();
    expect(calls.filter((c) => c[0] === 'updateMany')).toHaveLength(0);
    expect(docs.get('s\nk').answer).toEqual(answer);
    await a.close();
    await b.close();
  });

  it('keeps an answer the earlier take stores after a takeover read its entry as abandoned, and answers it', async () => {
    const { store: a, docs } = scripted();
    const { store: b } = scripted();
    const keys = (a as unknown as { keys: { findOne: (f: unknown) => Promise<unknown> } }).keys;
    (b as unknown as { keys: unknown }).keys = keys; // two processes, one collection
    expect(await a.begin('s', 'k', 'f', 0)).toEqual({ state: 'started' });
    // a's beats did not land for ABANDONED_MS (a partition, a stalled event loop) while its request
    // went on: b reads the entry as abandoned, and a's answer lands between b's read and b's replace.
    const findOne = keys.findOne;
    keys.findOne = async (f) => {
      const found = await findOne(f);
      await a.complete('s', 'k', answer, 0);
      return found;
    };
    const begun = await b.begin('s', 'k', 'f', ABANDONED_MS + 1);
    keys.findOne = findOne;
    expect(docs.get('s\nk').answer).toEqual(answer);
    expect(begun).toEqual({ state: 'done', fingerprint: 'f', answer });
  });

  it('judges an entry written before the heartbeat by its start and the stale time', async () => {
    const { store, docs, calls } = scripted();
    docs.set('s\nk', { _id: 's\nk', fingerprint: 'f', startedAt: 0, expiresAt: new Date(TTL_MS), answer: null });
    expect(await store.begin('s', 'k', 'f', ABANDONED_MS)).toMatchObject({ state: 'running' });
    expect(await store.begin('s', 'k', 'f', STALE_MS)).toEqual({ state: 'started' });
    expect(calls.find((c) => c[0] === 'replaceOne')).toEqual(['replaceOne', { _id: 's\nk', startedAt: 0, beatAt: { $exists: false }, answer: null }]);
    await store.close();
  });
});

describe.each([
  ['embedded', () => SqliteIdempotencyStore.open(':memory:') as IdempotencyStore],
  ['MongoDB', () => scripted().store as IdempotencyStore],
])('an abandoned key in the %s store (a keyed write that may have written, unanswered)', (_name, open) => {
  it('is taken over at once by a repeat of its request, with the mark of the try that began the write', async () => {
    const s = open();
    expect(await s.begin('s', 'k', 'f', 1000, '12/12')).toEqual({ state: 'started' });
    expect(await s.begin('s', 'k', 'f', 1001, '13/13')).toEqual({ state: 'running', fingerprint: 'f' });
    await s.abandon('s', 'k');
    // Another body is told the key runs (422 idempotency_key_reused): it may not take the write over.
    expect(await s.begin('s', 'k', 'g', 1002, '14/14')).toEqual({ state: 'running', fingerprint: 'f' });
    expect(await s.begin('s', 'k', 'f', 1003, '15/15')).toEqual({ state: 'started', earlier: '12/12' });
    expect(await s.begin('s', 'k', 'f', 1004, '16/16')).toEqual({ state: 'running', fingerprint: 'f' });
    // The takeover ended unanswered too: the next one still looks from where the first try began.
    await s.abandon('s', 'k');
    expect(await s.begin('s', 'k', 'f', 1005, '17/17')).toEqual({ state: 'started', earlier: '12/12' });
    await s.complete('s', 'k', answer);
    expect(await s.begin('s', 'k', 'f', 1006)).toEqual({ state: 'done', fingerprint: 'f', answer });
    // Past the TTL the key is forgotten: a new use starts afresh.
    expect(await s.begin('s', 'k', 'f', 1005 + TTL_MS, '18/18')).toEqual({ state: 'started' });
    await s.close();
  });

  it('is ended only by the take that holds it: a late end of a try taken over since leaves the takeover running', async () => {
    const s = open();
    const a = 1000;
    expect(await s.begin('s', 'k', 'f', a, '1/1')).toEqual({ state: 'started' });
    // Try a answered 503 write_pending and waits on in the background; past the stale time, b takes over.
    const b = a + STALE_MS + 1;
    expect(await s.begin('s', 'k', 'f', b, '2/2')).toEqual({ state: 'started', earlier: '1/1' });
    // a's wait ends: its abandon (or a release, or an answer) must not end b's take.
    await s.abandon('s', 'k', a);
    await s.release('s', 'k', a);
    await s.complete('s', 'k', { ...answer, body: '{"late":true}' }, a);
    expect(await s.begin('s', 'k', 'f', b + 1, '3/3')).toEqual({ state: 'running', fingerprint: 'f' });
    await s.complete('s', 'k', answer, b);
    expect(await s.begin('s', 'k', 'f', b + 2)).toEqual({ state: 'done', fingerprint: 'f', answer });
    await s.close();
  });

  it('is abandoned and released by the take that holds it', async () => {
    const s = open();
    expect(await s.begin('s', 'k', 'f', 1000, '1/1')).toEqual({ state: 'started' });
    await s.abandon('s', 'k', 1000);
    expect(await s.begin('s', 'k', 'f', 1001, '2/2')).toEqual({ state: 'started', earlier: '1/1' });
    await s.release('s', 'k', 1001);
    expect(await s.begin('s', 'k', 'g', 1002)).toEqual({ state: 'started' });
    await s.close();
  });
});

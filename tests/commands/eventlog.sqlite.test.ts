import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NO_STREAM, type NewEvent } from '../../eventlog/port.js';
import { type RecordedEvent } from '../../domain/shared/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { decodeBatch, decodeOutcomes, encodeBatch, encodeOutcomes, type Outcome, type WireAppend } from '../../eventlog/sqlite-writer.js';
import { readSettler } from '../../runtime/scale.js';
import { buildService } from '../support/process.js';
import { eventLogContract } from './eventlog.contract.js';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-log-'));
  dirs.push(dir);
  return path.join(dir, 'log.sqlite');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

eventLogContract('SqliteEventLog', async () => {
  const log = new SqliteEventLog(tempFile(), { pollMs: 20 });
  return { log, cleanup: () => log.close() };
});

eventLogContract('SqliteEventLog committing on the calling thread', async () => {
  const log = new SqliteEventLog(tempFile(), { pollMs: 20, writerThread: false });
  return { log, cleanup: () => log.close() };
});

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  data,
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

describe.each([
  { mode: 'on its writer thread', writerThread: true },
  { mode: 'on the calling thread', writerThread: false },
])('committing $mode', ({ writerThread }) => {
  it('acknowledges appends only with WAL and synchronous=FULL', async () => {
    const log = new SqliteEventLog(tempFile(), { writerThread });
    try {
      // 2 is FULL: the WAL is synced at every commit, so an acknowledged append survives a power cut.
      expect(await log.writerSettings()).toEqual({ journalMode: 'wal', synchronous: 2 });
    } finally {
      await log.close();
    }
  });

  it('commits two hundred concurrent appends in a handful of transactions', async () => {
    const log = new SqliteEventLog(tempFile(), { writerThread });
    try {
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(`cart-${i}`, [event('Opened')], NO_STREAM)));
      expect(results).toHaveLength(200);
      expect(new Set(results.map((r) => r.position.commit)).size).toBe(200);
      // One transaction is one fsync: group commit is what lets them share it.
      expect(log.stats.appends).toBe(200);
      expect(log.stats.commits).toBeGreaterThan(0);
      expect(log.stats.commits).toBeLessThanOrEqual(5);
    } finally {
      await log.close();
    }
  });

  it('keeps the order of appends accepted on successive turns while earlier batches commit, and sends every one before it closes', async () => {
    const log = new SqliteEventLog(tempFile(), { writerThread });
    const appends: Array<Promise<{ nextExpectedRevision: bigint }>> = [];
    try {
      // Each append expects the one before it, unanswered yet: out of order, one would conflict.
      for (let i = 0; i < 40; i++) {
        appends.push(log.append('cart-1', [event('Added', { i })], i === 0 ? NO_STREAM : BigInt(i - 1)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Some may still wait for a batch ahead of them to be answered: close sends them too.
    } finally {
      await log.close();
    }
    expect((await Promise.all(appends)).map((r) => r.nextExpectedRevision)).toEqual(Array.from({ length: 40 }, (_, i) => BigInt(i)));
  });

  it('gives a multi-event append consecutive positions and revisions, and its followers the events as written', async () => {
    const log = new SqliteEventLog(tempFile(), { writerThread });
    const seen: RecordedEvent[] = [];
    const sub = log.subscribe(null, (e) => void seen.push(e));
    try {
      const [a, b] = await Promise.all([
        log.append('order-1', [event('Placed', { n: 1 }), event('Paid', { n: 2 }), event('Shipped', { n: 3 })], NO_STREAM),
        log.append('order-2', [event('Placed', { n: 4 })], NO_STREAM),
      ]);
      expect(a).toEqual({ nextExpectedRevision: 2n, position: { commit: 3n, prepare: 3n } });
      expect(b).toEqual({ nextExpectedRevision: 0n, position: { commit: 4n, prepare: 4n } });
      await vi.waitFor(() => expect(seen).toHaveLength(4));
      expect(seen.map((e) => [e.stream, e.revision, e.position.commit, e.type, e.data.n])).toEqual([
        ['order-1', 0n, 1n, 'Placed', 1],
        ['order-1', 1n, 2n, 'Paid', 2],
        ['order-1', 2n, 3n, 'Shipped', 3],
        ['order-2', 0n, 4n, 'Placed', 4],
      ]);
      expect(await log.readStream('order-1')).toEqual(seen.slice(0, 3));
    } finally {
      await sub.stop();
      await log.close();
    }
  });

  it('writes every accepted append before it closes', async () => {
    const file = tempFile();
    const log = new SqliteEventLog(file, { writerThread });
    const appends = Array.from({ length: 50 }, (_, i) => log.append(`late-${i}`, [event('Opened')], NO_STREAM));
    await log.close();
    expect(await Promise.all(appends)).toHaveLength(50);
    const again = new SqliteEventLog(file, { writerThread });
    try {
      expect((await again.head())?.commit).toBe(50n);
    } finally {
      await again.close();
    }
  });
});

describe('the SQLite event log on disk', () => {
  it('fails a conflicting append inside a shared transaction alone', async () => {
    const log = new SqliteEventLog(tempFile());
    try {
      await log.append('cart-2', [event('Opened')], NO_STREAM);
      const results = await Promise.allSettled([
        log.append('cart-1', [event('Opened')], NO_STREAM),
        log.append('cart-2', [event('Opened')], NO_STREAM),
        log.append('cart-3', [event('Opened')], NO_STREAM),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    } finally {
      await log.close();
    }
  });

  it('keeps every acknowledged event across close and reopen, and goes on numbering', async () => {
    const file = tempFile();
    const first = new SqliteEventLog(file);
    await first.append('cart-1', [event('Opened', { n: 1 }), event('Renamed', { n: 2 })], NO_STREAM);
    const before = await first.readStream('cart-1');
    const head = await first.head();
    await first.close();

    const again = new SqliteEventLog(file);
    try {
      expect(await again.readStream('cart-1')).toEqual(before);
      expect(await again.head()).toEqual(head);
      expect((await again.append('cart-1', [event('Closed')], 1n)).nextExpectedRevision).toBe(2n);
    } finally {
      await again.close();
    }
  });

  it('writes the appends accepted before close()', async () => {
    const file = tempFile();
    const log = new SqliteEventLog(file);
    const pending = log.append('cart-1', [event('Opened')], NO_STREAM);
    await log.close();
    await expect(pending).resolves.toMatchObject({ nextExpectedRevision: 0n });
    const again = new SqliteEventLog(file);
    try {
      expect(await again.readStream('cart-1')).toHaveLength(1);
    } finally {
      await again.close();
    }
  });
});

describe.each([{ writerThread: true }, { writerThread: false }])('settling reads to what another process appended (writer thread: $writerThread)', ({ writerThread }) => {
  it('waits for nothing after its own appends, and for the head once another connection appended, even below its own', async () => {
    const file = tempFile();
    const mine = new SqliteEventLog(file, { writerThread });
    const other = new SqliteEventLog(file, { writerThread });
    const waited: bigint[] = [];
    const settle = readSettler(mine, async (p) => void waited.push(p.commit));
    try {
      await mine.append('s-1', [event('Mine')], NO_STREAM);
      await settle();
      expect(waited).toEqual([1n]);
      expect(settle()).toBeNull();
      // Its own appends were settled by the writes themselves.
      await mine.append('s-2', [event('Mine'), event('Mine')], NO_STREAM);
      expect(settle()).toBeNull();

      await other.append('s-3', [event('Theirs')], NO_STREAM);
      const settling = settle();
      expect(settling).not.toBeNull();
      await settling;
      expect(waited).toEqual([1n, 4n]);
      expect(settle()).toBeNull();

      // Another process's event under one of its own: the head is its own, but position 5 is not.
      await other.append('s-4', [event('Theirs')], NO_STREAM);
      await mine.append('s-5', [event('Mine')], NO_STREAM);
      expect(settle()).not.toBeNull();
    } finally {
      await other.close();
      await mine.close();
    }
  });
});

describe('a follower in a process that shares the file', () => {
  it('gets its own and the other connection’s events, interleaved, each once and in log order', async () => {
    const file = tempFile();
    const mine = new SqliteEventLog(file, { pollMs: 10 });
    const other = new SqliteEventLog(file, { pollMs: 10 });
    const seen: bigint[] = [];
    const sub = mine.subscribe(null, (e) => {
      seen.push(e.position.commit);
    });
    try {
      for (let i = 0; i < 30; i++) {
        const log = i % 3 === 0 ? other : mine;
        await Promise.all([log.append(`a-${i}`, [event('A'), event('B')], NO_STREAM), log.append(`b-${i}`, [event('C')], NO_STREAM)]);
      }
      const head = (await mine.head())!.commit;
      const deadline = Date.now() + 5000;
      while (seen.at(-1) !== head && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      expect(seen).toEqual(Array.from({ length: Number(head) }, (_, i) => BigInt(i + 1)));
    } finally {
      await sub.stop();
      await other.close();
      await mine.close();
    }
  });
});

describe('a process that only appends and closes', () => {
  it('lives until the writer thread has closed the file, and no longer', async () => {
    // Nothing else keeps this process's event loop alive: were the writer thread let go before
    // it exits, the process would end inside close(), without printing.
    const build = await buildService();
    const sqlite = pathToFileURL(path.join(path.dirname(build.server), '..', 'eventlog', 'sqlite.js')).href;
    const file = tempFile();
    const script = `
      const { SqliteEventLog } = await import(${JSON.stringify(sqlite)});
      const log = new SqliteEventLog(${JSON.stringify(file)});
      const e = { type: 'A', data: {}, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' } };
      const appends = [];
      for (let round = 0; round < 20; round++) {
        for (let i = 0; i < 50; i++) appends.push(log.append('s-' + round + '-' + i, [e], 'no_stream'));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await log.close();
      const last = (await Promise.all(appends)).at(-1);
      console.log('closed after position ' + last.position.commit);`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 });
    expect(stdout.trim()).toBe('closed after position 1000');
  });
});

describe('what travels to and from the writer thread', () => {
  it('carries a batch whole: any text in data, every kind of expected revision, several events', () => {
    const batch: WireAppend[] = [
      { stream: 'constituent-1', expected: 'no_stream', events: [{ type: 'ConstituentCreated', data: JSON.stringify({ s: 'nul \u0000, tab \t, emoji 😀, quote "' }), metadata: '{}' }] },
      { stream: 'constituent-2', expected: 41n, events: [{ type: 'A', data: '""', metadata: '{}' }, { type: 'B', data: '[]', metadata: '{"x":1}' }] },
      { stream: 'ids-event', expected: 'any', events: [{ type: 'IdBlockReserved', data: '{}', metadata: '{}' }] },
    ];
    expect(decodeBatch(encodeBatch(batch))).toEqual(batch);
  });

  it('carries outcomes whole: positions, revisions, and conflicts with or without a stream', () => {
    const outcomes: Outcome[] = [{ revision: 0n, position: 1n }, { conflict: true, actual: null }, { conflict: true, actual: 7n }, { revision: 2n ** 40n, position: 2n ** 50n }];
    expect(decodeOutcomes(encodeOutcomes(outcomes))).toEqual(outcomes);
  });
});

describe('the SQLite event log, at its edges', () => {
  it('answers a second close only once everything accepted is written', async () => {
    const file = tempFile();
    const log = new SqliteEventLog(file);
    const appends = Array.from({ length: 100 }, (_, i) => log.append(`late-${i}`, [event('Opened')], NO_STREAM));
    const first = log.close();
    await log.close();
    const reader = new SqliteEventLog(file, { writerThread: false });
    try {
      expect((await reader.head())?.commit).toBe(100n);
    } finally {
      await reader.close();
    }
    await first;
    expect(await Promise.all(appends)).toHaveLength(100);
  });

  it('refuses an event JSON cannot hold, alone, and goes on appending', async () => {
    const log = new SqliteEventLog(tempFile());
    try {
      const results = await Promise.allSettled([
        log.append('ok-1', [event('Opened')], NO_STREAM),
        log.append('bad-1', [{ ...event('Opened'), data: undefined as unknown as Record<string, unknown> }], NO_STREAM),
        log.append('ok-2', [event('Opened')], NO_STREAM),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await log.readStream('bad-1')).toEqual([]);
      expect((await log.append('ok-3', [event('Opened')], NO_STREAM)).position.commit).toBe(3n);
    } finally {
      await log.close();
    }
  });

  it('refuses stream and event type names with a NUL (it separates a batch’s parts on the way to the writer thread)', async () => {
    const log = new SqliteEventLog(tempFile());
    try {
      await expect(log.append('bad\u0000stream', [event('Opened')], NO_STREAM)).rejects.toThrow(/NUL/);
      await expect(log.append('ok-1', [event('Bad\u0000Type')], NO_STREAM)).rejects.toThrow(/NUL/);
      expect((await log.append('ok-1', [event('Opened')], NO_STREAM)).position.commit).toBe(1n);
      expect(decodeBatch('')).toEqual([]);
    } finally {
      await log.close();
    }
  });

  it('reads another process’s rows at once when head() sees them, even while it still has its own to take from memory', async () => {
    const file = tempFile();
    // Polls too slowly to matter: only the wake-up from head() can bring the other row in time.
    const mine = new SqliteEventLog(file, { pollMs: 60_000 });
    const other = new SqliteEventLog(file, { writerThread: false, pollMs: 60_000 });
    const seen: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const sub = mine.subscribe(null, async (e) => {
      seen.push(e.stream);
      if (e.stream === 'mine-1') await held;
    });
    try {
      await mine.append('mine-1', [event('A')], NO_STREAM);
      await mine.append('mine-2', [event('A')], NO_STREAM);
      await vi.waitFor(() => expect(seen).toEqual(['mine-1']));
      await other.append('theirs-1', [event('B')], NO_STREAM);
      await mine.head();
      release();
      await vi.waitFor(() => expect(seen).toEqual(['mine-1', 'mine-2', 'theirs-1']), { timeout: 3_000 });
    } finally {
      release();
      await sub.stop();
      await other.close();
      await mine.close();
    }
  });
});

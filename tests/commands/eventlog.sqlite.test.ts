import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NO_STREAM, type NewEvent } from '../../commands/eventlog/port.js';
import { SqliteEventLog } from '../../commands/eventlog/sqlite.js';
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

const event = (type: string, data: Record<string, unknown> = {}): NewEvent => ({
  type,
  data,
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

describe('the SQLite event log on disk', () => {
  it('acknowledges appends only with WAL and synchronous=FULL', async () => {
    const log = new SqliteEventLog(tempFile());
    try {
      expect(log.database.pragma('journal_mode', { simple: true })).toBe('wal');
      // 2 is FULL: the WAL is synced at every commit, so an acknowledged append survives a power cut.
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2);
    } finally {
      await log.close();
    }
  });

  it('commits two hundred concurrent appends in a handful of transactions', async () => {
    const log = new SqliteEventLog(tempFile());
    try {
      const transactions = vi.spyOn(log.database, 'transaction');
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(`cart-${i}`, [event('Opened')], NO_STREAM)));
      expect(results).toHaveLength(200);
      // One transaction is one fsync: group commit is what lets them share it.
      expect(transactions.mock.calls.length).toBeGreaterThan(0);
      expect(transactions.mock.calls.length).toBeLessThanOrEqual(5);
    } finally {
      await log.close();
    }
  });

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

describe('telling whether another process appended', () => {
  it('changes the foreign-write token for another connection’s commit, not for its own', async () => {
    const file = tempFile();
    const mine = new SqliteEventLog(file);
    const other = new SqliteEventLog(file);
    try {
      const before = mine.foreignWriteToken();
      await mine.append('s-1', [event('Mine')], NO_STREAM);
      expect(mine.foreignWriteToken()).toBe(before);
      await other.append('s-2', [event('Theirs')], NO_STREAM);
      expect(mine.foreignWriteToken()).not.toBe(before);
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

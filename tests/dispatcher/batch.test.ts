import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_STREAM } from '../../commands/eventlog/port.js';
import { SqliteEventLog } from '../../commands/eventlog/sqlite.js';
import { batcherFor } from '../../dispatcher/queue/sqlite-batch.js';

describe('webhook bookkeeping on the event log’s connection', () => {
  it('commits without an fsync but leaves the log’s appends at synchronous=FULL', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-batch-'));
    const log = new SqliteEventLog(path.join(dir, 'log.sqlite'));
    try {
      const seen: number[] = [];
      log.database.exec('CREATE TABLE t (x INTEGER)');
      await batcherFor(log.database).run(() => {
        seen.push(Number(log.database.pragma('synchronous', { simple: true })));
        log.database.prepare('INSERT INTO t VALUES (1)').run();
      });
      expect(seen).toEqual([1]); // NORMAL inside the batch
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2); // FULL again
      await log.append('s-1', [{ type: 'X', data: {}, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: new Date().toISOString() } }], NO_STREAM);
      expect(Number(log.database.pragma('synchronous', { simple: true }))).toBe(2);
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { positionFromString } from '../../domain/shared/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { type Delivery, SqliteDeliveryLog } from '../../dispatcher/deliveries.js';
import { SqliteDeliveryQueue } from '../../dispatcher/queue/sqlite.js';
import { type Replay, SqliteReplayStore } from '../../dispatcher/replays.js';
import { testConfig } from '../../runtime/config.js';
import { moveWebhookTables, openWebhookDb } from '../../runtime/webhooks.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const WEBHOOK_TABLES = ['webhook_checkpoints', 'webhook_deliveries', 'webhook_replays', 'webhook_tasks'];
const task = (n: number) => ({ id: `${n}.constituent.created.1`, endpointId: 1, team: 1, eventId: `evt_1_${n}`, eventType: 'constituent.created', body: `{"n":${n}}` });
const delivery = (n: number, status: Delivery['status'] = 'succeeded'): Delivery => ({
  id: `dlv_${n}`,
  endpointId: 1,
  eventId: `evt_1_${n}`,
  eventType: 'constituent.created',
  attempt: 1,
  status,
  responseStatus: status === 'pending' ? null : 204,
  durationMs: status === 'pending' ? null : 3,
  error: null,
  attemptedAt: status === 'pending' ? null : '2026-11-26T12:00:00.000Z',
  nextAttemptAt: null,
});
const replay: Replay = {
  id: 'rpl_1', team: 1, endpointId: 1, from: '2026-11-01T00:00:00Z', to: null, types: null, status: 'running',
  queued: 2, sent: 1, failed: 0, next: 'c1', exhausted: false, error: null, createdAt: '2026-11-26T12:00:00.000Z',
};

/** What a table holds, and the indexes and schema it was made with. */
function snapshot(db: Database.Database) {
  const out: Record<string, unknown> = {};
  for (const t of WEBHOOK_TABLES) {
    out[t] = db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).safeIntegers(false).all();
    out[`${t} schema`] = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? ORDER BY name").all(t);
  }
  return out;
}
const tables = (db: Database.Database) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'webhook_%' ORDER BY name").pluck().all() as string[]);

/** A data directory as Turnout wrote it before webhooks.sqlite: the webhook tables in the log's file. */
async function olderDataDir() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'turnout-webhook-db-'));
  dirs.push(dataDir);
  const log = new SqliteEventLog(path.join(dataDir, 'turnout.sqlite'));
  const queue = new SqliteDeliveryQueue(log.database);
  const deliveries = new SqliteDeliveryLog(log.database);
  await queue.enqueue([task(1), task(2), task(3)], positionFromString('3'));
  await deliveries.record([delivery(1), delivery(2), delivery(3, 'pending')]);
  await new SqliteReplayStore(log.database).create(replay);
  // The newest row gone (as after a delete): its seq is still never given again.
  log.database.prepare("DELETE FROM webhook_deliveries WHERE id = 'dlv_3'").run();
  return { dataDir, log, before: snapshot(log.database) };
}

describe('webhooks.sqlite', () => {
  it('takes over the webhook tables of an older data directory: rows, indexes, the queue’s checkpoint and the delivery numbering', async () => {
    const { dataDir, log, before } = await olderDataDir();
    const closers: Array<() => Promise<void> | void> = [];
    const db = openWebhookDb(testConfig({ dataDir }), log.database, (fn) => closers.push(fn));
    try {
      expect(tables(log.database)).toEqual([]);
      expect(snapshot(db)).toEqual(before);
      // Everything reads on from where it was.
      const queue = new SqliteDeliveryQueue(db);
      expect(await queue.checkpoint()).toEqual(positionFromString('3'));
      const deliveries = new SqliteDeliveryLog(db);
      await deliveries.record([delivery(4)]);
      expect(db.prepare("SELECT seq FROM webhook_deliveries WHERE id = 'dlv_4'").pluck().get()).toBe(4);
      expect((await new SqliteReplayStore(db).get('rpl_1'))?.queued).toBe(2);
    } finally {
      for (const close of closers.reverse()) await close();
      await log.close();
    }
  });

  it('drops the leftovers of a start stopped between the copy and the drop, and copies nothing twice', async () => {
    const { dataDir, log, before } = await olderDataDir();
    // The copy committed, the drop not: both files hold the tables. (The move, run from a copy of
    // the log's file, drops them from the copy only.)
    const logCopy = path.join(dataDir, 'turnout-copy.sqlite');
    await log.database.backup(logCopy);
    const from = new Database(logCopy);
    const copy = new Database(path.join(dataDir, 'webhooks.sqlite'));
    copy.pragma('journal_mode = WAL');
    moveWebhookTables(from, copy);
    from.close();
    copy.close();
    expect(tables(log.database)).toEqual(WEBHOOK_TABLES);
    const closers: Array<() => Promise<void> | void> = [];
    const db = openWebhookDb(testConfig({ dataDir }), log.database, (fn) => closers.push(fn));
    try {
      expect(tables(log.database)).toEqual([]);
      expect(snapshot(db)).toEqual(before);
    } finally {
      for (const close of closers.reverse()) await close();
      await log.close();
    }
  });

  it('starts empty beside a log that never had webhook tables, and its writes do not touch the log’s file', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'turnout-webhook-db-'));
    dirs.push(dataDir);
    const log = new SqliteEventLog(path.join(dataDir, 'turnout.sqlite'));
    const closers: Array<() => Promise<void> | void> = [];
    const db = openWebhookDb(testConfig({ dataDir }), log.database, (fn) => closers.push(fn));
    try {
      await new SqliteDeliveryQueue(db).enqueue([task(1)], positionFromString('1'));
      expect(tables(log.database)).toEqual([]);
      expect(tables(db)).toEqual(['webhook_checkpoints', 'webhook_tasks']);
      expect(Number(db.pragma('synchronous', { simple: true }))).toBe(1);
    } finally {
      for (const close of closers.reverse()) await close();
      await log.close();
    }
  });
});

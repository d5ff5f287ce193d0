import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { batcherFor, shareFileWith } from '../../dispatcher/queue/sqlite-batch.js';
import { WalCheckpointer } from '../../runtime/wal-checkpointer.js';
import { walIndex } from '../support/wal-index.js';

/** A WAL database written through the batcher, with a checkpointer beside it, for one test. */
async function withCheckpointer(options: ConstructorParameters<typeof WalCheckpointer>[1], test: (db: Database.Database, cp: WalCheckpointer) => Promise<void>) {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-wal-'));
  const db = new Database(path.join(dir, 'webhooks.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (x BLOB)');
  const cp = new WalCheckpointer(db, options);
  shareFileWith(db, () => cp.idle(), () => cp.committed());
  try {
    await test(db, cp);
  } finally {
    await cp.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One batch of `pages` rows of 4,000 bytes: about that many WAL frames. */
const write = (db: Database.Database, pages: number) => {
  const insert = db.prepare('INSERT INTO t VALUES (?)');
  return batcherFor(db).run(() => {
    for (let i = 0; i < pages; i++) insert.run(randomBytes(4000));
  });
};
const walBytes = (db: Database.Database) => statSync(`${db.name}-wal`).size;

describe('WalCheckpointer', () => {
  it('takes the checkpoints off the writer’s connection and runs them on its thread, so the WAL starts over', () =>
    withCheckpointer({ everyMs: 60_000 }, async (db, cp) => {
      expect(Number(db.pragma('wal_autocheckpoint', { simple: true }))).toBe(0);
      // 1,500 frames: past SQLite's own 1,000, and nothing checkpointed them on this connection.
      await write(db, 750);
      await write(db, 750);
      expect(walIndex(db.name).frames).toBeGreaterThan(1_400);
      // The first commit asked for one (once a minute here): it ran on the thread and copied every frame.
      const answer = await cp.checkpoint();
      expect(answer).toMatchObject({ busy: false });
      expect(answer && 'log' in answer && answer.checkpointed === answer.log).toBe(true);
      const grown = walBytes(db);
      await write(db, 100);
      expect(walBytes(db)).toBe(grown); // written from the WAL's start again, not appended
    }));

  it('asks for a checkpoint after a commit at most once every everyMs', () =>
    withCheckpointer({ everyMs: 60_000 }, async (db, cp) => {
      let asked = 0;
      const checkpoint = cp.checkpoint.bind(cp);
      cp.checkpoint = () => (asked++, checkpoint());
      for (let i = 0; i < 5; i++) await write(db, 1);
      expect(asked).toBe(1);
    }));

  it('restarts a WAL that passive checkpoints left long, with the writer’s batches held (not blocked) meanwhile', () =>
    withCheckpointer({ everyMs: 0, restartAt: 500 }, async (db, cp) => {
      // A reader on an old snapshot keeps a passive checkpoint from copying the frames after it.
      const reader = new Database(db.name);
      reader.exec('BEGIN');
      reader.prepare('SELECT COUNT(*) FROM t').get();
      await write(db, 600);
      const passive = await cp.checkpoint();
      expect(passive && 'log' in passive && passive.log >= 500 && passive.checkpointed < passive.log).toBe(true);
      reader.exec('COMMIT');
      reader.close();
      // The next one is a RESTART, and a batch queued while it runs commits once it is done.
      const order: string[] = [];
      const restart = cp.checkpoint().then((a) => (order.push('restart'), a));
      let idle = false;
      void cp.idle().then(() => void (idle = true));
      expect(idle).toBe(false);
      const batch = write(db, 1).then(() => void order.push('batch'));
      await Promise.all([restart, batch]);
      expect(order).toEqual(['restart', 'batch']);
      const after = cp.last!;
      expect('log' in after && after.busy === false && after.checkpointed === after.log).toBe(true);
      // Started over: the next commit writes from the WAL's first frame, and the next checkpoint
      // is a passive one again (the RESTART's own count was the WAL's length before it).
      expect(walIndex(db.name).frames).toBeLessThan(10);
      expect((cp as unknown as { restartNext: boolean }).restartNext).toBe(false);
    }));

  it('gives the checkpoints back to the writer’s connection when its thread is lost', () =>
    withCheckpointer({}, async (db, cp) => {
      await (cp as unknown as { worker: import('node:worker_threads').Worker }).worker.terminate();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(Number(db.pragma('wal_autocheckpoint', { simple: true }))).toBe(1000);
      expect(await cp.checkpoint()).toBeNull();
      await write(db, 1);
      expect(await cp.idle()).toBeUndefined();
    }));
});

describe('WalCheckpointer.close', () => {
  it('keeps the process alive until its thread has exited, even with a checkpoint answered meanwhile', async () => {
    // In a process of its own: the test runner's would stay alive whatever the thread did.
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-wal-close-'));
    const source = new URL('../../runtime/wal-checkpointer.ts', import.meta.url).href;
    const program = `
      import Database from 'better-sqlite3';
      const { WalCheckpointer } = await import(${JSON.stringify(source)});
      const db = new Database(${JSON.stringify(path.join(dir, 'w.sqlite'))});
      db.pragma('journal_mode = WAL');
      db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
      const cp = new WalCheckpointer(db);
      void cp.checkpoint();
      await cp.close();
      console.log('closed');
    `;
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], { cwd: path.resolve(import.meta.dirname, '../..') });
      expect(stdout.trim()).toBe('closed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

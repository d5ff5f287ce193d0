import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ANY, type NewEvent } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';

const dirs: string[] = [];
function tempFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-team-'));
  dirs.push(dir);
  return path.join(dir, 'log.sqlite');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ev = (team: number, n: number): NewEvent => ({
  type: 'ConstituentUpdated',
  data: { id: n, changes: {} },
  metadata: { team, source: 'Application', keyName: null, correlationId: `c${n}`, at: new Date().toISOString() },
});

describe('reading one team\u2019s events from the embedded log', () => {
  it('gives the team\u2019s events after (or from) a position, in log order', async () => {
    const log = new SqliteEventLog(tempFile(), { writerThread: false });
    for (let i = 1; i <= 6; i++) await log.append(`constituent-${i}`, [ev(i % 2 ? 7 : 8, i)], ANY);
    const all = await log.readTeam(7, null, 100);
    expect(all.map((e) => e.data.id)).toEqual([1, 3, 5]);
    expect((await log.readTeam(7, all[0].position, 100)).map((e) => e.data.id)).toEqual([3, 5]);
    expect((await log.readTeam(7, all[1].position, 100, true)).map((e) => e.data.id)).toEqual([3, 5]);
    expect((await log.readTeam(7, null, 2)).map((e) => e.data.id)).toEqual([1, 3]);
    await log.close();
  });

  it('reads through the (team, position) index, never the other teams\u2019 rows', async () => {
    const log = new SqliteEventLog(tempFile(), { writerThread: false });
    const plan = log.database.prepare('EXPLAIN QUERY PLAN SELECT position FROM events WHERE team = ? AND position > ? ORDER BY position LIMIT ?').all(1, 0, 10) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join(';')).toMatch(/USING (COVERING )?INDEX events_team_position/);
    await log.close();
  });

  it('adds the team column and its index to a log written before they existed', async () => {
    const file = tempFile();
    const old = new Database(file);
    old.exec(`CREATE TABLE events (position INTEGER PRIMARY KEY AUTOINCREMENT, stream TEXT NOT NULL, revision INTEGER NOT NULL,
      type TEXT NOT NULL, data TEXT NOT NULL, metadata TEXT NOT NULL, UNIQUE (stream, revision))`);
    const e = ev(3, 1);
    old.prepare('INSERT INTO events (stream, revision, type, data, metadata) VALUES (?, 0, ?, ?, ?)').run('constituent-1', e.type, JSON.stringify(e.data), JSON.stringify(e.metadata));
    old.close();
    const log = new SqliteEventLog(file, { writerThread: false });
    expect((await log.readTeam(3, null, 10)).map((r) => r.stream)).toEqual(['constituent-1']);
    await log.append('constituent-2', [ev(3, 2)], ANY);
    expect((await log.readTeam(3, null, 10)).map((r) => r.stream)).toEqual(['constituent-1', 'constituent-2']);
    await log.close();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

// decisions.md §5: once a write answered 2xx, every read and search by any key of the team
// reflects it. On the embedded files the read models are written by the projector thread, which
// the log's writer thread tells each commit; here that thread starts each step late, so a read
// that did not wait for it (a write answered at its commit) would miss the write.
const LATE_MS = 150;
let dir: string;
let t: TestApp;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-ryw-'));
  // Read by the projector thread, which copies the environment when it starts.
  process.env.TURNOUT_TEST_PROJECTOR_LATE_MS = String(LATE_MS);
  t = await startTestApp({ dataDir: dir });
});

afterAll(async () => {
  delete process.env.TURNOUT_TEST_PROJECTOR_LATE_MS;
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('read-your-writes on the embedded files, the projector thread running late', () => {
  it('shows a create and an update at once in the record, the list, searches, the change feed, history and activity, to another key', async () => {
    const team = await t.team([
      ['Writer', 'read_write'],
      ['Reader', 'read_only'],
    ]);
    const [writer, reader] = [team.api.Writer, team.api.Reader];
    const started = Date.now();
    for (let i = 0; i < 3; i++) {
      const made = await writer.post('/constituents', { FirstName: `Late${i}`, LastName: 'Projector', Email1: `late${i}@example.org` });
      expect(made.status).toBe(201);
      const id = made.body.constituent.PkConstituent;
      expect((await reader.get(`/constituents/${id}`)).body.constituent.FirstName).toBe(`Late${i}`);
      expect((await reader.get(`/constituents?search=late${i}@`)).body.constituents.map((c: { PkConstituent: number }) => c.PkConstituent)).toEqual([id]);
      expect((await reader.get('/constituents')).body.total).toBe(i + 1);
      const feed = (await reader.get('/changes?limit=1000')).body.changes.filter((e: { type: string }) => e.type === 'constituent.created');
      expect(feed.map((e: { data: { PkConstituent: number } }) => e.data.PkConstituent)).toContain(id);

      expect((await writer.patch(`/constituents/${id}`, { Nickname: `Nick${i}` })).status).toBe(200);
      expect((await reader.get(`/constituents?search=nick${i}`)).body.constituents.map((c: { Nickname: string }) => c.Nickname)).toEqual([`Nick${i}`]);
      expect((await reader.get(`/constituents/${id}/history`)).body.history).toHaveLength(2);
      const activity = (await team.admin.get('/activity')).body.activity.filter((a: { recordType: string; recordId: number }) => a.recordType === 'constituent' && a.recordId === id);
      expect(activity.map((a: { action: string }) => a.action).sort()).toEqual(['created', 'updated']);
    }
    // The hook ran: each write waited for a step that started late.
    expect(Date.now() - started).toBeGreaterThanOrEqual(6 * LATE_MS);

    const many = await Promise.all(Array.from({ length: 12 }, (_, i) => writer.post('/constituents', { FirstName: `Crowd${i}`, LastName: 'Together' })));
    expect(many.map((m) => m.status)).toEqual(many.map(() => 201));
    expect((await reader.get('/constituents?search=together')).body.total).toBe(12);
  });
});

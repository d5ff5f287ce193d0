import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../dispatcher/feed.js';
import { START, typeMatcher } from '../../dispatcher/feed-cursor.js';
import { rebuildReadModels } from '../../runtime/rebuild.js';
import { type Client, client as makeClient, startTestApp, type TestApp } from '../support/app.js';
import { taskTeam, writeMixedChanges } from './volunteer-support.js';

/**
 * The embedded stack reads the change feed from the table the projector thread keeps
 * (dispatcher/feed-table.ts). It must answer exactly what building the envelopes from the log
 * answers, page for page, and keep doing so across a rebuild.
 */
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function readAll(api: Client, limit: number, query = ''): Promise<any[]> {
  const out: any[] = [];
  let after = '';
  for (;;) {
    const r = await api.get(`/changes?limit=${limit}${query}${after ? `&after=${after}` : ''}`);
    expect(r.status, r.raw).toBe(200);
    out.push(...r.body.changes);
    after = r.body.next;
    if (!r.body.hasMore) return out;
  }
}

/** The team's envelopes as the log alone builds them (the production stack's way). */
async function fromLog(t: TestApp, team: number, types: string | undefined = undefined): Promise<any[]> {
  const feed = new ChangeFeed(t.runtime.services.log);
  const pages: string[][] = [];
  for await (const page of feed.pages(team, { after: START, types: typeMatcher(types) })) pages.push(page);
  await feed.close();
  return pages.flat().map((e) => JSON.parse(e));
}

async function busyTeam(t: TestApp) {
  const team = await taskTeam(t);
  await writeMixedChanges(team);
  return team;
}

describe('the change feed on the embedded stack', () => {
  it('answers from its table exactly what the log builds, page by page, by type, and after a rebuild', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-feed-table-'));
    dirs.push(dir);
    let t = await startTestApp({ dataDir: dir });
    expect(t.runtime.services.feedTable).toBeDefined();
    const other = await taskTeam(t);
    await other.volunteer('Zed');
    const team = await busyTeam(t);
    const expected = await fromLog(t, team.id);
    expect(expected.length).toBeGreaterThanOrEqual(8);
    expect(expected.map((e) => e.type)).toContain('volunteer_task.signed_up');
    expect(await readAll(team.api, 1000)).toEqual(expected);
    expect(await readAll(team.api, 1)).toEqual(expected);
    expect(await readAll(team.api, 3, '&types=volunteer_task.*,constituent.updated')).toEqual(await fromLog(t, team.id, 'volunteer_task.*,constituent.updated'));
    const middle = await team.api.get('/changes?limit=4');
    const exported = await team.admin.get(`/export?from=${middle.body.next}`);
    expect(exported.raw.trim().split('\n').map((l) => JSON.parse(l))).toEqual(expected.slice(4));
    await t.close();

    await rebuildReadModels(dir);
    t = await startTestApp({ dataDir: dir });
    const again = makeClient(t.app, '/api/v1', team.keys.Integration.key);
    expect(await readAll(again, 1000)).toEqual(expected);
    const resumed = await again.get(`/changes?limit=1000&after=${middle.body.next}`);
    expect(resumed.body.changes).toEqual(expected.slice(4));
    await t.close();
  }, 60_000);

  it('answers a waiting reader with a write made while it waits', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-feed-wait-'));
    dirs.push(dir);
    const t = await startTestApp({ dataDir: dir });
    const team = await taskTeam(t);
    const now = await team.api.get('/changes?after=now');
    // The longest wait there is (30 s): answered long before it runs out, it was the write that woke it.
    const waiting = team.api.get(`/changes?after=${now.body.next}&wait=30`);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    const c = await team.api.post('/constituents', { LastName: 'Late' });
    const page = await waiting;
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(page.body.changes.map((e: any) => [e.type, e.data.PkConstituent])).toEqual([['constituent.created', c.body.constituent.PkConstituent]]);
    await t.close();
  }, 60_000);
});

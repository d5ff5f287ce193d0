import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FeedTable } from '../../dispatcher/feed-table.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { markers, scan, scanned } from '../support/erasure-markers.js';
import { waitUntil } from '../support/nats.js';

/**
 * An erasure whose change-feed rewrite fails at run time, without a crash (issue 31): answered
 * 503 erasure_pending, shown as pending (the admin list, /readyz), and finished by the process
 * itself after a back-off, or by the client's repeated request, from the step that failed.
 */

let dirs: string[] = [];
let apps: TestApp[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const t of apps) await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  apps = [];
  dirs = [];
});

/** The feed table's rewrite fails while `failing` is set, with an error that quotes one of the person's values (as JSON.parse's do). */
function failFeedRewrite(feedTable: FeedTable, quoted: string) {
  const control = { failing: true, calls: 0, written: 0 };
  const real = feedTable.rewriteBy.bind(feedTable);
  feedTable.rewriteBy = async (team, plan) => {
    control.calls++;
    if (control.failing) throw new Error(`the change feed's rewrite kept meeting new blocks near "${quoted}"`);
    control.written++;
    return real(team, plan);
  };
  return control;
}

async function setUp(tag: string, retry: { initialMs: number; maxMs: number }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-erase-retry-'));
  dirs.push(dir);
  const t = await startTestApp({ dataDir: dir, erasureRetry: retry });
  apps.push(t);
  const made = await t.team();
  const api = made.api.Integration;
  const first = markers(tag, 1);
  const second = markers(tag, 2);
  const control = markers(`${tag}c`, 3);
  const id = (await api.post('/constituents', { ...first, MailingState: 'VT' })).body.constituent.PkConstituent as number;
  expect((await api.patch(`/constituents/${id}`, second)).status).toBe(200);
  expect((await api.post('/constituents', control)).status).toBe(201);
  // The volunteer's envelopes carry copies of the name: found by the values the journal sealed.
  expect((await api.post('/volunteers', { FkConstituent: id })).status).toBe(201);
  expect((await api.get('/changes?limit=100')).raw).toContain(second.Email1);
  const person = [...scanned(first), ...scanned(second)];
  expect(scan(dir, person).length).toBeGreaterThan(0);
  const warned: string[] = [];
  vi.spyOn(console, 'warn').mockImplementation((line: unknown) => void warned.push(String(line)));
  return { t, dir, made, api, id, person, control: scanned(control), quoted: second.LastName, warned };
}

const erasures = async (t: TestApp) => (await t.admin.get('/erasures')).body.erasures as Array<Record<string, any>>;

describe('an erasure whose change-feed rewrite fails (issue 31)', () => {
  it('answers 503 erasure_pending, shows it pending, and is finished by the process itself', async () => {
    const s = await setUp('rt', { initialMs: 20, maxMs: 100 });
    const feed = failFeedRewrite(s.t.runtime.services.feedTable!, s.quoted);
    const rewriteStream = vi.spyOn(s.t.runtime.services.log, 'rewriteStream');

    const first = await s.made.admin.post(`/constituents/${s.id}/erase`, { reason: 'asked' });
    expect(first.status).toBe(503);
    expect(first.body.error.code).toBe('erasure_pending');
    expect(first.body.error.message).toContain(`constituent ${s.id}`);
    expect(Number(first.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // The record already reads as erased; its values are still in the feed table.
    expect((await s.api.get(`/constituents/${s.id}`)).status).toBe(404);

    // Tried again by itself, with nobody asking, while the rewrite keeps failing.
    await waitUntil('a second failed attempt', () => feed.calls >= 3);
    const [pending] = await erasures(s.t);
    expect(pending).toMatchObject({ PkConstituent: s.id, teamId: s.made.id, fromPreviousRun: false, lastStep: 'log' });
    expect(pending.attempts).toBeGreaterThanOrEqual(1);
    expect(pending.lastError).toContain("the change feed's rewrite kept meeting new blocks");
    const ready = await s.t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(JSON.parse(ready.body).followers).toContainEqual({ name: 'erasures', state: 'reconnecting', behind: 1 });
    // No personal value in what is shown or logged.
    for (const text of [JSON.stringify(pending), ready.body, ...s.warned]) for (const v of s.person) expect(text).not.toContain(v);
    expect(s.warned.some((l) => l.includes(`constituent ${s.id}`) && l.includes('failed at the change feed'))).toBe(true);

    feed.failing = false;
    await waitUntil('the erasure finished by the process', async () => (await erasures(s.t)).length === 0);
    expect(feed.written).toBe(1);
    // From the step that failed: the log was rewritten once, by the first attempt.
    expect(rewriteStream).toHaveBeenCalledTimes(1);
    expect((await s.t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    expect((await s.api.get('/changes?limit=100')).raw).not.toContain(s.quoted);
    expect(scan(s.dir, s.person)).toEqual([]);
    expect(scan(s.dir, s.control).length).toBeGreaterThan(0);

    // The client's retry of the same request is the same 200 as any repeated erasure.
    const again = await s.made.admin.post(`/constituents/${s.id}/erase`, { reason: 'asked' });
    expect(again.status).toBe(200);
    expect(again.body.erased.PkConstituent).toBe(s.id);
  }, 60_000);

  it('is finished by the client repeating it, the repeats joining one attempt that starts from the failed step', async () => {
    // The process's own next attempt is an hour away: only the client's repeat can finish it.
    const s = await setUp('rj', { initialMs: 3_600_000, maxMs: 3_600_000 });
    const feed = failFeedRewrite(s.t.runtime.services.feedTable!, s.quoted);
    const rewriteStream = vi.spyOn(s.t.runtime.services.log, 'rewriteStream');

    // A 503 is not kept under its Idempotency-Key (decisions.md §11): the same key may ask again.
    const key = { headers: { 'idempotency-key': 'erase-rj' } };
    expect((await s.made.admin.post(`/constituents/${s.id}/erase`, {}, key)).status).toBe(503);
    const [pending] = await erasures(s.t);
    expect(pending).toMatchObject({ state: 'retrying', attempts: 1, lastStep: 'log' });
    expect(Date.parse(pending.nextAttemptAt) - Date.now()).toBeGreaterThan(3_000_000);

    feed.failing = false;
    const [a, b] = await Promise.all([s.made.admin.post(`/constituents/${s.id}/erase`, {}, key), s.made.admin.post(`/constituents/${s.id}/erase`, {})]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(b.body).toEqual(a.body);
    expect(await s.made.admin.post(`/constituents/${s.id}/erase`, {}, key)).toMatchObject({ status: 200, body: a.body });
    expect(feed.written).toBe(1);
    expect(rewriteStream).toHaveBeenCalledTimes(1);
    expect(await erasures(s.t)).toEqual([]);
    // The linked volunteer's copies too: the repeat used the values sealed before the log lost them.
    expect(scan(s.dir, s.person)).toEqual([]);
    expect(scan(s.dir, s.control).length).toBeGreaterThan(0);
  }, 60_000);
});

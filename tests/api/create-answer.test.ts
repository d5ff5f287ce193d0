import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { CONSTITUENTS } from '../../projections/constituents.js';
import { startTestApp, type TestApp } from '../support/app.js';

const dirs: string[] = [];
const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-create-answer-'));
  dirs.push(dir);
  return dir;
}

const FULL = { FirstName: 'Ada', LastName: 'Lovelace', Email1: 'ADA@Example.org', Phone1: '555-010-0199', MailingState: 'virginia', DateOfBirth: '1815-12-10', IsEmailOk: true, ConstituentDescription: 'x' };

// The create answers with the record its read model's projector makes of the appended events,
// not a read of the row back: what a read then shows must be the same, on either store.
describe.each([
  ['in memory', () => ({})],
  ['on the embedded files', () => ({ dataDir: tempDir() })],
])('POST /constituents %s', (name, options) => {
  it('answers with what a read right after shows, ETag included, without reading the record back', async () => {
    const t = await startTestApp(options());
    apps.push(t);
    const api = (await t.team()).api.Integration;
    const get = vi.spyOn(t.runtime.services.store, 'get');
    const created = await api.post('/constituents', FULL);
    expect(created.status).toBe(201);
    // In memory the projector itself reads the store on this thread; on the files it runs elsewhere.
    if (name === 'on the embedded files') expect(get.mock.calls.filter(([collection]) => collection === CONSTITUENTS)).toEqual([]);
    get.mockRestore();
    const id = created.body.constituent.PkConstituent;
    const read = await api.get(`/constituents/${id}`);
    expect(created.body.constituent).toEqual(read.body.constituent);
    expect(created.headers.etag).toBe(read.headers.etag);
    expect(created.body.constituent).toMatchObject({ Email1: 'ADA@Example.org', MailingState: 'VA', Nickname: null, FkTeam: expect.any(Number) });
  });
});

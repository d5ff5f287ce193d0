import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import { testConfig } from '../../runtime/config.js';
import { LOG_FILE } from '../../runtime/read-models.js';
import { openRuntime } from '../../runtime/wiring.js';
import { client } from '../support/app.js';

/**
 * The bench switch TURNOUT_BENCH_LOG (runtime/wiring.ts, bench/sealing.ts): the embedded server
 * with its SQLite log used through the port only, as on EventStoreDB, plain (`port`) or through
 * the sealing layer (`sealed`). Sealed, no personal value reaches the log's files, and every read
 * (the record, its history, the change feed built from the log) gives them back; plain, the same
 * scan finds them, so the scan can tell.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function serve(mode: 'port' | 'sealed') {
  const dir = mkdtempSync(path.join(tmpdir(), `turnout-bench-log-${mode}-`));
  dirs.push(dir);
  const config = testConfig({ dataDir: dir });
  const runtime = await openRuntime(config, { env: { TURNOUT_BENCH_LOG: mode } });
  const app = await buildApp(runtime.services);
  const admin = client(app, '/admin/v1', config.adminToken);
  const team = (await admin.post('/teams', { name: 'Bench' })).body.team.id as number;
  const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Bench', scope: 'read_write' })).body.key as string;
  return {
    dir,
    api: client(app, '/api/v1', key),
    admin: client(app, `/admin/v1/teams/${team}`, config.adminToken),
    close: async () => {
      await app.close();
      await runtime.close();
    },
  };
}

const logBytes = (dir: string) =>
  Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.startsWith(LOG_FILE))
      .map((f) => readFileSync(path.join(dir, f))),
  ).toString('latin1');

describe('TURNOUT_BENCH_LOG, the sealing bench switch', () => {
  for (const mode of ['sealed', 'port'] as const) {
    it(`${mode}: reads every personal value back; ${mode === 'sealed' ? 'none of them is in the log files' : 'the log files hold them'}`, async () => {
      const s = await serve(mode);
      const marks = { FirstName: `Mkfirst${mode}`, LastName: `Mklast${mode}`, Email1: `mkmail${mode}@example.org` };
      const created = await s.api.post('/constituents', marks);
      expect(created.status).toBe(201);
      const id = created.body.constituent.PkConstituent as number;
      expect((await s.api.patch(`/constituents/${id}`, { MailingCity: `Mkcity${mode}` })).status).toBe(200);
      expect((await s.api.get(`/constituents/${id}`)).body.constituent).toMatchObject({ ...marks, MailingCity: `Mkcity${mode}` });
      expect((await s.api.get(`/constituents/${id}/history`)).body.history).toHaveLength(2);
      const feed = (await s.api.get('/changes?limit=100')).body.changes.filter((c: { type: string }) => c.type.startsWith('constituent.'));
      expect(feed.map((c: { data: Record<string, unknown> }) => c.data)).toEqual([expect.objectContaining(marks), expect.objectContaining({ MailingCity: `Mkcity${mode}` })]);
      await s.close();
      const bytes = logBytes(s.dir);
      for (const v of [...Object.values(marks), `Mkcity${mode}`]) expect(bytes.includes(v)).toBe(mode === 'port');
    });
  }

  it('sealed: an erasure destroys the key, and the record reads as erased', async () => {
    const s = await serve('sealed');
    const id = (await s.api.post('/constituents', { FirstName: 'Zelda' })).body.constituent.PkConstituent as number;
    expect((await s.admin.post(`/constituents/${id}/erase`, {})).status).toBe(200);
    expect((await s.api.get(`/constituents/${id}`)).status).toBe(404);
    const feed = (await s.api.get('/changes?limit=100')).body.changes.filter((c: { type: string }) => c.type === 'constituent.created');
    expect(feed[0]).toMatchObject({ erased: true, data: { FirstName: null } });
    await s.close();
  });
});

import { describe, expect, it } from 'vitest';
import { http, type TurnoutProcess, useBuiltService } from '../support/process.js';

/**
 * SIGTERM at any moment of a process's life ends it with exit code 0 within 10 s, its files
 * consistent (issue 30): while it still starts (the port open, the modules loading, the stores
 * opening), and while a change-feed long poll is pending.
 */
const service = useBuiltService('turnout-stop-');

async function terminate(p: TurnoutProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; ms: number }> {
  const started = performance.now();
  await p.stop();
  return { code: p.process.exitCode, signal: p.process.signalCode, ms: performance.now() - started };
}

describe('stopping a process at any moment', () => {
  it('exits 0 on a SIGTERM that arrives while it is still starting, and its data dir opens again whole', async () => {
    const dataDir = service.freshDir();
    const env = { TURNOUT_DATA_DIR: dataDir };
    const first = await service.start({ env });
    const admin = http(`${first.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Kept' })).body.team.id;
    expect((await terminate(first)).code).toBe(0);

    // /healthz answers from the early port while the rest of the process is still loading.
    const starting = await service.start({ env, ready: false });
    const stopped = await terminate(starting);
    expect(stopped, starting.output()).toMatchObject({ code: 0, signal: null });
    expect(stopped.ms).toBeLessThan(10_000);

    const again = await service.start({ env });
    const teams = await http(`${again.url}/admin/v1`, 'test-admin-token').get('/teams');
    expect(teams.status).toBe(200);
    expect(teams.body.teams.find((t: { id: number }) => t.id === team)?.name).toBe('Kept');
    expect((await terminate(again)).code).toBe(0);
  }, 120_000);

  it('answers a pending change-feed long poll at once when stopping, instead of holding the stop for its wait', async () => {
    const p = await service.start({ env: { TURNOUT_DATA_DIR: service.freshDir() } });
    const admin = http(`${p.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Polling' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Integration', scope: 'read_only' })).body.key;
    const api = http(`${p.url}/api/v1`, key);
    const now = (await api.get('/changes?after=now')).body.next;
    const poll = api.get(`/changes?after=${now}&wait=30`).catch((err: Error) => ({ status: 0, body: err.message }));
    // The poll is parked once the server has it; give it a moment to be.
    await new Promise((r) => setTimeout(r, 300));
    const stopped = await terminate(p);
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(10_000);
    expect(await poll).toMatchObject({ status: 200, body: { changes: [] } });
  }, 120_000);
});

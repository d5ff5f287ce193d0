import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { http, useBuiltService } from '../support/process.js';

/** decisions.md §13: `turnout rebuild` works offline on a data dir, never under a running server. */
const service = useBuiltService('turnout-cli-rebuild-');

describe('turnout rebuild', () => {
  it('refuses with exit 1 while a server holds the data dir, then rebuilds it offline, and the server starts on what it built', async () => {
    const dir = service.freshDir();
    const env = { TURNOUT_DATA_DIR: dir };
    const server = await service.start({ env });
    const main = service.built('cli/main.js');
    // The team and key through the admin API: the CLI's own commands for them have their test in cli.test.ts.
    const admin = http(`${server.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Rebuilt' })).body.team.id as number;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Check', scope: 'read_write' })).body.key as string;
    await http(`${server.url}/api/v1`, key).post('/constituents', { LastName: 'Kept', Email1: 'kept@example.org' });

    const refused = await runCli(main, ['rebuild', '--data-dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`in use by another Turnout process (pid ${server.process.pid})`);
    expect(refused.stderr).toContain('stop the server first');
    expect(refused.stdout).toBe('');

    await server.stop();
    // From TURNOUT_DATA_DIR when --data-dir is not given.
    const rebuilt = await runCli(main, ['rebuild'], { TURNOUT_DATA_DIR: dir });
    expect(rebuilt.code).toBe(0);
    expect(JSON.parse(rebuilt.stdout)).toEqual({ rebuilt: { dataDir: path.resolve(dir), events: expect.any(Number), seconds: expect.any(Number) } });
    expect(JSON.parse(rebuilt.stdout).rebuilt.events).toBeGreaterThan(3);
    expect(rebuilt.stderr).toMatch(/^rebuild: (\d+)\/\1 \(\d+\/s, ETA 0 s\)\n$/m);
    expect(rebuilt.stderr).not.toMatch(/[\r\x1b]/);

    const restarted = await service.start({ env });
    const found = await http(`${restarted.url}/api/v1`, key).get('/constituents?email=kept@example.org');
    expect(found.body.constituents.map((c: { LastName: string }) => c.LastName)).toEqual(['Kept']);
  }, 180_000);

  it('exits 1 for a dir that holds no Turnout log, creating nothing there', async () => {
    const dir = path.join(service.freshDir(), 'nothing-here');
    const r = await runCli(service.built('cli/main.js'), ['rebuild', '--data-dir', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/holds no Turnout log/);
    expect(existsSync(dir)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'vitest';
import { startTestApp } from '../support/app.js';
import { fastWebhooks } from '../dispatcher/support.js';

it('boots', async () => {
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'zz-'));
    let t0 = performance.now();
    const t = await startTestApp({ dataDir: dir, webhook: fastWebhooks() });
    const lap = (s: string) => { console.log(s, Math.round(performance.now() - t0)); t0 = performance.now(); };
    lap('boot');
    const tm = await t.admin.post('/teams', { name: 'x' }); lap('team1');
    await t.admin.post(`/teams/${tm.body.team.id}/api-keys`, { name: 'k', scope: 'read_write' }); lap('key1');
    await t.admin.post('/teams', { name: 'y' }); lap('team2');
    await t.admin.get('/teams'); lap('get');
    await t.close(); lap('close');
  }
}, 120_000);

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../api/app.js';
import { testConfig } from '../../runtime/config.js';
import { openRuntime } from '../../runtime/wiring.js';
import { client, startTestApp } from '../support/app.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('restarting on the same data directory', () => {
  it('rebuilds the read models from the log, keeps keys working and never reuses ids', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-restart-'));
    dirs.push(dir);
    const first = await startTestApp({ dataDir: dir });
    const team = await first.team();
    const made = (await team.api.Integration.post('/constituents', { FirstName: 'Mae', LastName: 'Jemison', Email1: 'mae@example.org' })).body.constituent;
    await team.api.Integration.patch(`/constituents/${made.PkConstituent}`, { Nickname: 'Doc' });
    await first.close();

    const second = await startTestApp({ dataDir: dir });
    const api = client(second.app, '/api/v1', team.keys.Integration.key);
    const read = await api.get(`/constituents/${made.PkConstituent}`);
    expect(read.status).toBe(200);
    expect(read.body.constituent).toMatchObject({ ConstituentName: 'Mae Jemison', Nickname: 'Doc' });
    expect((await api.get('/constituents?email=MAE@example.org')).body.total).toBe(1);
    const next = (await api.post('/constituents', { LastName: 'Next' })).body.constituent;
    expect(next.PkConstituent).toBeGreaterThan(made.PkConstituent);
    expect((await second.admin.get(`/teams/${team.id}/activity`)).body.total).toBeGreaterThanOrEqual(3);
    await second.close();
  });
});

describe('logs', () => {
  it('never carry an API key or the admin token', async () => {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, cb) {
        out += chunk;
        cb();
      },
    });
    const config = testConfig({ adminToken: 'adm_' + randomBytes(24).toString('base64url') });
    const runtime = await openRuntime(config);
    const app = await buildApp(runtime.services, { logger: { level: 'trace', stream: sink } });
    const admin = client(app, '/admin/v1', config.adminToken);
    const t = await admin.post('/teams', { name: 'Logged' });
    const k = await admin.post(`/teams/${t.body.team.id}/api-keys`, { name: 'K', scope: 'read_write' });
    const key: string = k.body.key;
    const api = client(app, '/api/v1', key);
    await api.post('/constituents', { LastName: 'X' });
    await api.get('/constituents?search=X');
    await client(app, '/api/v1', key + 'x').get('/constituents');
    // Clients that put the credential where it does not belong: the query string, the path.
    const anonymous = client(app, '/api/v1');
    const encoded = encodeURIComponent(key);
    for (const url of [`/constituents?api_key=${encoded}`, `/constituents?key=${encoded}`, `/constituents?token=${encoded}`, `/constituents?page=1&Api-Key=${encoded}`])
      await anonymous.get(url);
    await anonymous.get(`/constituents?search=${encoded}`); // any parameter: the value looks like a key
    await anonymous.get(`/constituents/${encoded}`);
    await anonymous.get(`/${encoded}/constituents`);
    await client(app, '/admin/v1').get(`/teams?token=${config.adminToken}`);
    await client(app, '/admin/v1').get(`/teams/${config.adminToken}`);
    await app.close();
    await runtime.close();
    expect(out.length).toBeGreaterThan(100);
    expect(out).toContain('[REDACTED]'); // the URLs were logged, redacted
    expect(out).not.toContain(key.slice('tko_'.length + 12 + 1)); // the secret part (base64url: may hold "_")
    expect(out).not.toContain(config.adminToken!.slice('adm_'.length));
    expect(out.toLowerCase()).not.toContain('bearer');
    expect(out.toLowerCase()).not.toContain('authorization');
  });
});

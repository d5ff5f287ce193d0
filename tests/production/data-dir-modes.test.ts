import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileTransport } from '../../commands/notifications/transport.js';
import { testConfig } from '../../runtime/config.js';
import { openWebhookDb } from '../../runtime/webhooks.js';
import { openRuntime } from '../../runtime/wiring.js';
import { client } from '../support/app.js';
import { buildApp } from '../../api/app.js';

/**
 * The data dir holds the main key that seals the webhook signing secrets in the log, and mail to
 * constituents: 0700, its files 0600, even under the common umask 022 that would make new files
 * world-readable. Vitest runs this file in a child process (pool: forks), so the umask is its own.
 */
const dirs: string[] = [];
let saved: number;
beforeEach(() => {
  saved = process.umask(0o022);
});
afterEach(() => {
  process.umask(saved);
});
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'turnout-modes-'));
  dirs.push(d);
  return d;
}

const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);

describe('the data dir under umask 022', () => {
  it('is 0700, and the main key, the log, its -wal and -shm, the lock and its pid file are 0600', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const runtime = await openRuntime(testConfig({ dataDir }));
    const app = await buildApp(runtime.services);
    // A webhook endpoint: its signing secret is written, sealed, to the log (and first to the -wal).
    const admin = client(app, '/admin/v1', 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Modes' })).body.team;
    expect((await admin.post(`/teams/${team.id}/webhook-endpoints`, { url: 'http://127.0.0.1:9/hook', events: ['constituent.created'] })).status).toBe(201);

    expect(mode(dataDir)).toBe('700');
    const files = readdirSync(dataDir);
    expect(files).toEqual(expect.arrayContaining(['main-key', 'turnout.sqlite', 'turnout.sqlite-wal', 'turnout.sqlite-shm', 'turnout.lock', 'turnout.lock.pid']));
    for (const f of files) expect([f, mode(path.join(dataDir, f))]).toEqual([f, '600']);
    await app.close();
    await runtime.close();
  });

  it('narrows a data dir and log that an older version created 0755 and 0644', async () => {
    const dataDir = tempDir();
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'turnout.sqlite'), '', { mode: 0o644 });
    const runtime = await openRuntime(testConfig({ dataDir }));
    expect(mode(dataDir)).toBe('700');
    expect(mode(path.join(dataDir, 'turnout.sqlite'))).toBe('600');
    await runtime.close();
  });

  it('keeps webhooks.sqlite and its -wal and -shm at 0600', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const closers: Array<() => Promise<void> | void> = [];
    const db = openWebhookDb(testConfig({ dataDir }), null, (fn) => closers.push(fn));
    db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    expect(mode(dataDir)).toBe('700');
    for (const f of ['webhooks.sqlite', 'webhooks.sqlite-wal', 'webhooks.sqlite-shm']) {
      expect(existsSync(path.join(dataDir, f))).toBe(true);
      expect([f, mode(path.join(dataDir, f))]).toEqual([f, '600']);
    }
    for (const close of closers.reverse()) await close();
    expect(db.open).toBe(false);
  });

  it('writes the outbox 0700 and its .eml files 0600', async () => {
    const outbox = path.join(tempDir(), 'outbox');
    mkdirSync(outbox, { mode: 0o755 });
    const transport = new FileTransport(outbox);
    await transport.send({ id: 'n1', from: 'turnout@example.org', to: 'sam@example.org', subject: 'Hi', text: 'Private.' });
    await transport.close();
    expect(mode(outbox)).toBe('700');
    expect(mode(path.join(outbox, 'n1.eml'))).toBe('600');
  });
});

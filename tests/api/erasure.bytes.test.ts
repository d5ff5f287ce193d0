import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { filesOf, markers, scan, scanned } from '../support/erasure-markers.js';
import { waitUntil } from '../support/nats.js';
import { http, type TurnoutProcess, useBuiltService } from '../support/process.js';

/**
 * decisions.md §17, on the files themselves (issue 31 point 4): every personal field of a
 * constituent gets a distinctive marker, at two revisions; it is linked, delivered, queued,
 * mailed, read through the feed, history and export; then erased (through `turnout erase`), and
 * every file of the data dir (WAL included) is scanned for every marker, while the server runs
 * and after it stops: none is found, while the same scan finds a control record's markers.
 * The crash test kills the server in the middle of an erasure and checks the same after a restart.
 */
const service = useBuiltService('turnout-erasure-');
const TOKEN = 'test-admin-token';

const received: string[] = [];
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    // /down never takes a delivery: its tasks stay queued with their bodies. Its attempts are not
    // kept: a retry of its erased envelope landing among a replay's made the replay look out of order.
    if (req.url !== '/down') received.push(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(req.url === '/down' ? 500 : 200).end();
  });
});
beforeAll(() => new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve)));
afterAll(() => receiver.close());

const ENV = {
  TURNOUT_RATE_LIMIT_PER_SECOND: '0',
  TURNOUT_RATE_LIMIT_PER_MINUTE: '0',
  TURNOUT_WEBHOOK_ALLOW_INSECURE: '1',
  // The failing endpoint's tasks wait in the queue for the whole test.
  TURNOUT_WEBHOOK_RETRY_BASE_MS: '3600000',
};

/** Writes the person (two revisions), the control, links, webhooks, a mail and stored answers; answers what to scan for. */
async function populate(server: TurnoutProcess, dir: string, tag: string) {
  const admin = http(`${server.url}/admin/v1`, TOKEN);
  const team = (await admin.post('/teams', { name: `Erasure ${tag}` })).body.team.id as number;
  const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Sync', scope: 'read_write' })).body.key as string;
  const api = http(`${server.url}/api/v1`, key);
  const rx = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const up = await admin.post(`/teams/${team}/webhook-endpoints`, { url: `${rx}/up`, events: ['*'] });
  expect(up.status).toBe(201);
  const endpoint = up.body.webhookEndpoint.id as number;
  expect((await admin.post(`/teams/${team}/webhook-endpoints`, { url: `${rx}/down`, events: ['*'] })).status).toBe(201);

  const first = markers(tag, 1);
  const second = markers(tag, 2);
  const control = markers(`${tag}c`, 3);
  const created = await api.post('/constituents', { ...first, MailingState: 'VT' }, { 'idempotency-key': `person-${tag}` });
  expect(created.status).toBe(201);
  const id = created.body.constituent.PkConstituent as number;
  expect((await api.patch(`/constituents/${id}`, second, { 'idempotency-key': `update-${tag}` })).status).toBe(200);
  expect((await api.post('/constituents', control, { 'idempotency-key': `control-${tag}` })).status).toBe(201);
  const volunteer = (await api.post('/volunteers', { FkConstituent: id }, { 'idempotency-key': `volunteer-${tag}` })).body.volunteer.PkVolunteer as number;
  // A task ahead: a confirmation is mailed now (a file in the data dir), a reminder queued.
  const task = await api.post('/volunteer-tasks', { VolunteerTaskTitle: `Canvass ${tag}`, FkVolunteer: volunteer, TaskStartDateTime: '2031-06-01T15:00:00Z' });
  expect(task.status).toBe(201);
  await waitUntil('the sign-up webhook', () => received.some((b) => b.includes(second.Email1) && b.includes('volunteer_task.signed_up')), 20_000);
  // The composer writes the address's domain in lower case.
  await waitUntil('the confirmation mail', () => existsSync(path.join(dir, 'outbox')) && filesOf(path.join(dir, 'outbox')).some((f) => readFileSync(f, 'utf8').toLowerCase().includes(second.Email1.toLowerCase())), 20_000);
  // Read through every way out, as an integrator would.
  expect((await api.get('/changes?limit=1000')).raw).toContain(second.LastName);
  expect((await api.get(`/constituents/${id}/history`)).raw).toContain(first.LastName);
  expect((await admin.get(`/teams/${team}/export`)).raw).toContain(first.Email1);
  const person = [...scanned(first), ...scanned(second)];
  // Sanity: before the erasure the scan does find the person.
  expect(scan(dir, person).length).toBeGreaterThan(0);
  return { team, id, api, admin, endpoint, person, control: scanned(control) };
}

describe('erasure on the files (decisions.md §17)', () => {
  it('leaves no personal value of any revision in any file of the data dir, while a control record\u2019s are found', async () => {
    const dir = service.freshDir();
    const server = await service.start({ env: { ...ENV, TURNOUT_DATA_DIR: dir } });
    const s = await populate(server, dir, 'bx');

    const cli = await runCli(service.built('cli/main.js'), ['erase', '--team', String(s.team), '--constituent', String(s.id), '--reason', 'asked to be forgotten'], {
      TURNOUT_URL: server.url,
      TURNOUT_ADMIN_TOKEN: TOKEN,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual({ erased: { PkConstituent: s.id, erasedAt: expect.any(String) } });
    expect((await s.api.get(`/constituents/${s.id}`)).status).toBe(404);
    await waitUntil('constituent.erased', () => received.some((b) => b.includes('"constituent.erased"') && b.includes(`"PkConstituent":${s.id}`)), 20_000);

    // While the server runs (its WAL files in place), then once it has stopped.
    expect(scan(dir, s.person)).toEqual([]);
    expect(scan(dir, s.control).length).toBeGreaterThan(0);

    // A replay sends the person's changes again with their ids and versions, erased.
    const sentBefore = received.length;
    const replay = await s.admin.post(`/teams/${s.team}/webhook-endpoints/${s.endpoint}/replay`, { from: '2000-01-01T00:00:00Z', types: ['constituent.*'] });
    expect(replay.status).toBe(202);
    const replayId = replay.body.replay.id;
    await waitUntil('the replay', async () => (await s.admin.get(`/teams/${s.team}/webhook-endpoints/${s.endpoint}/replays/${replayId}`)).body.replay.status === 'done', 20_000);
    await waitUntil('the replayed envelopes', () => received.slice(sentBefore).filter((b) => b.includes(`"PkConstituent":${s.id},`)).length >= 3, 20_000);
    // Sent up to 64 at a time (dispatcher/worker.ts), they may arrive in any order on a loaded machine.
    const replayed = received
      .slice(sentBefore)
      .map((b) => JSON.parse(b))
      .filter((e) => e.data.PkConstituent === s.id)
      .sort((a, b) => a.version - b.version);
    expect(replayed.map((e) => [e.type, e.version])).toEqual([
      ['constituent.created', 1],
      ['constituent.updated', 2],
      ['constituent.erased', 3],
    ]);
    for (const e of replayed) {
      expect(e.erased).toBe(true);
      if (e.type !== 'constituent.erased') expect(e.data).toMatchObject({ FirstName: null, Email1: null, Phone1: null, DateOfBirth: null });
    }
    expect(scan(dir, s.person)).toEqual([]);
    await server.stop();
    expect(scan(dir, s.person)).toEqual([]);
    expect(scan(dir, s.control).length).toBeGreaterThanOrEqual(s.control.length / 2);
  }, 120_000);

  // After the log's rewrite, after the change feed's (written from a plan made on its own thread),
  // and after the search index's merge (the read models' WAL not yet emptied).
  it.each(['log', 'feed', 'search-index'])('finishes an erasure the server died in the middle of (SIGKILL, after its %s step) at its next start', async (step) => {
    const dir = service.freshDir();
    const server = await service.start({ env: { ...ENV, TURNOUT_DATA_DIR: dir, TURNOUT_TEST_ERASURE_KILL_AFTER: step } });
    const s = await populate(server, dir, 'kx');
    const exited = once(server.process, 'exit');
    await s.admin.post(`/teams/${s.team}/constituents/${s.id}/erase`, {}).catch(() => null);
    await exited;
    // Killed part-way: some store still holds the person.
    expect(scan(dir, s.person).length).toBeGreaterThan(0);

    const again = await service.start({ env: { ...ENV, TURNOUT_DATA_DIR: dir } });
    // Ready only once the erasure is finished (a follower of readiness until then).
    expect(scan(dir, s.person)).toEqual([]);
    const admin = http(`${again.url}/admin/v1`, TOKEN);
    const answer = await admin.post(`/teams/${s.team}/constituents/${s.id}/erase`, {});
    expect(answer.status).toBe(200);
    expect(answer.body.erased.PkConstituent).toBe(s.id);
    await again.stop();
    expect(scan(dir, s.person)).toEqual([]);
    expect(scan(dir, s.control).length).toBeGreaterThan(0);
  }, 120_000);
});

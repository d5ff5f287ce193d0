import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNats, type NatsServer } from '../support/nats.js';
import { type Build, buildService, http, spawnTurnout, type TurnoutProcess } from '../support/process.js';

/**
 * Two API processes on one embedded SQLite log and one NATS server, as a load balancer would
 * spread requests over them: each runs a projector thread into the data dir's one read database,
 * limits are shared through NATS KV.
 */
const PER_MINUTE = 40;
let build: Build;
let nats: NatsServer;
let dataDir: string;
let a: TurnoutProcess;
let b: TurnoutProcess;

beforeAll(async () => {
  [build, nats] = await Promise.all([buildService(), startNats()]);
  dataDir = mkdtempSync(path.join(tmpdir(), 'turnout-mp-'));
  const env = {
    TURNOUT_DATA_DIR: dataDir,
    TURNOUT_NATS_URL: nats.url,
    TURNOUT_RATE_LIMIT_PER_SECOND: '0',
    TURNOUT_RATE_LIMIT_PER_MINUTE: String(PER_MINUTE),
  };
  // The first start creates the file; start them one after the other so neither races the schema.
  a = await spawnTurnout(build, { role: 'api', env });
  b = await spawnTurnout(build, { role: 'api', env });
}, 180_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await nats?.stop();
  build?.remove();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const admin = (p: TurnoutProcess) => http(p.url, 'test-admin-token');

/** A team made on one process, with fresh keys; returns a client per process for each key. */
async function teamWithKeys(on: TurnoutProcess, n: number) {
  const t = await admin(on).post('/admin/v1/teams', { name: `Team ${Math.random().toString(36).slice(2, 8)}` });
  expect(t.status, JSON.stringify(t.body)).toBe(201);
  const keys = [];
  for (let i = 0; i < n; i++) {
    const k = await admin(on).post(`/admin/v1/teams/${t.body.team.id}/api-keys`, { name: `Integration ${i}`, scope: 'read_write' });
    expect(k.status, JSON.stringify(k.body)).toBe(201);
    keys.push({ A: http(`${a.url}/api/v1`, k.body.key), B: http(`${b.url}/api/v1`, k.body.key) });
  }
  return keys;
}
const teamWithKey = async (on: TurnoutProcess) => (await teamWithKeys(on, 1))[0];

describe('two API processes sharing the embedded log', () => {
  it('reads on one process what the other has just written', async () => {
    // The key itself was written on A: B must already know it for its very first request.
    const api = await teamWithKey(a);
    for (let i = 0; i < 10; i++) {
      const [writer, reader] = i % 2 ? [api.B, api.A] : [api.A, api.B];
      const c = await writer.post('/constituents', { FirstName: `Reader${i}`, LastName: 'Test', Email1: `r${i}@example.org` });
      expect(c.status, JSON.stringify(c.body)).toBe(201);
      const id = c.body.constituent.PkConstituent;
      const g = await reader.get(`/constituents/${id}`);
      expect(g.status, JSON.stringify(g.body)).toBe(200);
      expect(g.body.constituent.FirstName).toBe(`Reader${i}`);
      const p = await reader.patch(`/constituents/${id}`, { Nickname: `N${i}` });
      expect(p.status, JSON.stringify(p.body)).toBe(200);
      expect((await writer.get(`/constituents/${id}`)).body.constituent.Nickname).toBe(`N${i}`);
    }
  });

  it('refuses on one process, at its next request, a key the other revoked', async () => {
    // B has the key in memory; only the read database's change mark tells it of A's revocation.
    const t = await admin(a).post('/admin/v1/teams', { name: `Team ${Math.random().toString(36).slice(2, 8)}` });
    const k = await admin(a).post(`/admin/v1/teams/${t.body.team.id}/api-keys`, { name: 'Revoked', scope: 'read_write' });
    const onB = http(`${b.url}/api/v1`, k.body.key);
    for (let i = 0; i < 3; i++) expect((await onB.get('/constituents')).status).toBe(200);
    expect((await admin(a).del(`/admin/v1/teams/${t.body.team.id}/api-keys/${k.body.apiKey.id}`)).status).toBe(200);
    expect((await onB.get('/constituents')).status).toBe(401);
  });

  it('keeps one read model: writes racing over both processes are each listed once, on both', async () => {
    const [k1, k2] = await teamWithKeys(a, 2);
    const tag = `Shared${Math.random().toString(36).slice(2, 8)}`;
    const made = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? k1.A : k2.B).post('/constituents', { FirstName: tag, LastName: `N${i}` })));
    for (const m of made) expect(m.status, JSON.stringify(m.body)).toBe(201);
    for (const api of [k1.A, k1.B]) {
      const list = await api.get(`/constituents?search=${tag}&pageSize=100`);
      expect(list.body.total).toBe(30);
      expect(new Set(list.body.constituents.map((c: { PkConstituent: number }) => c.PkConstituent)).size).toBe(30);
    }
  });

  it('holds one rate limit per key across both processes', async () => {
    const api = await teamWithKey(b);
    const replies = [];
    for (let i = 0; i < PER_MINUTE + 10; i++) replies.push(await (i % 2 ? api.B : api.A).get('/constituents?pageSize=1'));
    const statuses = replies.map((r) => r.status);
    // Each process alone would let PER_MINUTE through; together they let PER_MINUTE through.
    expect(statuses.filter((s) => s === 200)).toHaveLength(PER_MINUTE);
    expect(statuses.slice(PER_MINUTE).every((s) => s === 429)).toBe(true);
    const refused = replies[PER_MINUTE];
    expect(refused.body.error.code).toBe('rate_limited');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('creates exactly one constituent when twenty upserts of one email race over both processes', async () => {
    const api = await teamWithKey(a);
    const email = 'racer@example.org';
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? api.B : api.A).post('/constituents?mode=upsert&matchOn=email', { FirstName: `Racer${i}`, LastName: 'Test', Email1: email })),
    );
    for (const r of replies) expect([200, 201], JSON.stringify(r.body)).toContain(r.status);
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
    const ids = new Set(replies.map((r) => r.body.constituent.PkConstituent));
    expect(ids.size).toBe(1);
    for (const api2 of [api.A, api.B]) {
      const list = await api2.get(`/constituents?email=${encodeURIComponent(email)}`);
      expect(list.body.total).toBe(1);
    }
  });

  it('lets exactly one of twenty racing ifOpen claims of a task win, spread over both processes', async () => {
    // Each key may make PER_MINUTE requests: set up with two keys, claim with a third.
    const [k1, k2, k3] = await teamWithKeys(b, 3);
    const volunteers: number[] = [];
    for (let i = 0; i < 20; i++) {
      const api = i % 2 ? k1.B : k2.A;
      const c = await api.post('/constituents', { FirstName: `Claimer${i}`, LastName: 'Test', Email1: `claimer${i}@example.org` });
      expect(c.status, JSON.stringify(c.body)).toBe(201);
      const v = await (i % 2 ? k1.A : k2.B).post('/volunteers', { FkConstituent: c.body.constituent.PkConstituent });
      expect(v.status, JSON.stringify(v.body)).toBe(201);
      volunteers.push(v.body.volunteer.PkVolunteer);
    }
    const task = await k3.A.post('/volunteer-tasks', { VolunteerTaskTitle: 'Canvass' });
    expect(task.status, JSON.stringify(task.body)).toBe(201);
    const id = task.body.volunteerTask.PkTask;
    const answers = await Promise.all(volunteers.map((v, i) => (i % 2 ? k3.B : k3.A).patch(`/volunteer-tasks/${id}?ifOpen=true`, { FkVolunteer: v })));
    const codes = answers.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.body?.error?.code}`));
    expect(codes.filter((c) => c === 200), JSON.stringify(codes)).toHaveLength(1);
    for (const c of codes) expect([200, '409 not_open', '409 task_busy']).toContain(c);
    const winner = volunteers[codes.indexOf(200)];
    for (const api of [k3.A, k3.B]) expect((await api.get(`/volunteer-tasks/${id}`)).body.volunteerTask.FkVolunteer).toBe(winner);
  });
});

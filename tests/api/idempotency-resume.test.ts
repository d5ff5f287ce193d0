import { beforeAll, describe, expect, it } from 'vitest';
import type { Client, TestApp } from '../support/app.js';
import { appWithFailingSettle } from '../support/settle-failure.js';

/**
 * decisions.md §11 with §5: a keyed single write whose events committed but whose answer failed
 * (its wait for the read models gave up, or anything else after the commit) is written once. The
 * wait's failure is injected through the runtime's settle: the read models really are settled,
 * then the wait fails as a time-out would.
 */
const settle = appWithFailingSettle();
let t: TestApp;
beforeAll(() => {
  t = settle.app();
});

const key = (k: string) => ({ headers: { 'idempotency-key': k } });

/** The retry's answers until the key is no longer in progress (the background wait has ended). */
async function retryUntilAnswered(send: () => ReturnType<Client['post']>) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await send();
    if (r.status !== 409) return r;
    expect(r.body.error.code).toBe('idempotency_key_in_progress');
    if (Date.now() > deadline) throw new Error('the key stayed in progress');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const feed = async (api: Client) => (await api.get('/changes?limit=1000')).body.changes.map((c: { type: string }) => c.type);

describe('a keyed create whose wait for the read models times out after its commit', () => {
  it.each([
    ['/constituents', 'constituent', () => ({ LastName: 'Once' })],
    ['/events', 'event', () => ({ EventTitle: 'Town hall' })],
    ['/volunteer-tasks', 'volunteerTask', () => ({ VolunteerTaskTitle: 'Phone bank' })],
  ])('POST %s answers 503 write_pending, 409 while not readable, then its 201 once, writing one record', async (path, field, body) => {
    const { api } = await t.team();
    const c = api.Integration;
    settle.fail('time-out');
    const first = await c.post(path, body(), key('k1'));
    expect(first.status, first.raw).toBe(503);
    expect(first.body.error.code).toBe('write_pending');
    expect(first.headers['retry-after']).toBe('2');
    const meanwhile = await c.post(path, body(), key('k1'));
    expect(meanwhile.status).toBe(409);
    expect(meanwhile.body.error.code).toBe('idempotency_key_in_progress');

    settle.fail(null);
    const answer = await retryUntilAnswered(() => c.post(path, body(), key('k1')));
    expect(answer.status, answer.raw).toBe(201);
    expect(answer.headers['idempotent-replayed']).toBe('true');
    expect(answer.headers.etag).toBe('"1"');
    expect(answer.body[field]).toBeDefined();
    const replay = await c.post(path, body(), key('k1'));
    expect([replay.status, replay.headers['idempotent-replayed'], replay.raw, replay.headers.etag]).toEqual([201, 'true', answer.raw, '"1"']);
    expect((await c.get(path)).body.total).toBe(1);
    expect((await feed(c)).filter((type: string) => type.endsWith('.created'))).toHaveLength(1);
  });

  it('registers one volunteer', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const person = (await c.post('/constituents', { LastName: 'Vol' })).body.constituent.PkConstituent;
    settle.fail('time-out');
    expect((await c.post('/volunteers', { FkConstituent: person }, key('v'))).status).toBe(503);
    settle.fail(null);
    const answer = await retryUntilAnswered(() => c.post('/volunteers', { FkConstituent: person }, key('v')));
    expect([answer.status, answer.body.created]).toEqual([201, true]);
    expect((await c.get('/volunteers')).body.total).toBe(1);
    expect((await feed(c)).filter((type: string) => type === 'volunteer.created')).toHaveLength(1);
  });

  it('answers a PATCH once: one update event, the answer of the write', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const id = (await c.post('/constituents', { LastName: 'Before' })).body.constituent.PkConstituent;
    settle.fail('time-out');
    expect((await c.patch(`/constituents/${id}`, { LastName: 'After' }, { headers: { 'idempotency-key': 'p', 'if-match': '"1"' } })).status).toBe(503);
    settle.fail(null);
    const answer = await retryUntilAnswered(() => c.patch(`/constituents/${id}`, { LastName: 'After' }, { headers: { 'idempotency-key': 'p', 'if-match': '"1"' } }));
    expect([answer.status, answer.body.constituent.LastName, answer.headers.etag]).toEqual([200, 'After', '"2"']);
    expect((await feed(c)).filter((type: string) => type === 'constituent.updated')).toHaveLength(1);
  });

  it('without a key answers 503 write_pending too: written, readable soon', async () => {
    const { api } = await t.team();
    settle.fail('time-out');
    const r = await api.Integration.post('/constituents', { LastName: 'Keyless' });
    settle.fail(null);
    expect([r.status, r.body.error.code, r.headers['retry-after']]).toEqual([503, 'write_pending', '2']);
    expect((await api.Integration.get('/constituents')).body.total).toBe(1);
  });

  it('is still a 500 for a wait that gave up before anything was written', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const upsert = '/constituents?mode=upsert&matchOn=email';
    await c.post(upsert, { LastName: 'A', Email1: 'a@example.org' });
    // An upsert of a claimed email waits for the claim's record to be readable before it writes.
    settle.fail('time-out');
    const r = await c.post(upsert, { LastName: 'B', Email1: 'a@example.org' });
    settle.fail(null);
    expect([r.status, r.body.error.code]).toEqual([500, 'internal_error']);
    expect((await c.get('/constituents')).body.constituents.map((x: { LastName: string }) => x.LastName)).toEqual(['A']);
  });
});

describe('the ref a keyed write leaves in its events', () => {
  it('is on a keyed single write only: not on an unkeyed one, nor on a keyed batch (its journal resumes it)', async () => {
    const { id, api } = await t.team();
    const c = api.Integration;
    await c.post('/constituents', { LastName: 'Plain' });
    await c.post('/constituents', { LastName: 'Keyed' }, key('r'));
    await c.post('/constituents/batch', { items: [{ LastName: 'Batch' }] }, key('b'));
    const events = (await t.runtime.services.log.readTeam!(id, null, 100)).filter((e) => e.stream.startsWith('constituent-'));
    // In log order: the plain create, the keyed one, the batch's item.
    expect(events.map((e) => typeof e.metadata.idempotencyRef)).toEqual(['undefined', 'string', 'undefined']);
  });
});

describe('a keyed write that answered 5xx after its commit for another reason', () => {
  it('is answered from its record by the retry, and not written again', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    settle.fail('error');
    const first = await c.post('/constituents', { LastName: 'Twice?' }, key('e'));
    settle.fail(null);
    expect([first.status, first.body.error.code]).toEqual([500, 'internal_error']);
    const again = await c.post('/constituents', { LastName: 'Twice?' }, key('e'));
    expect([again.status, again.headers['idempotent-replayed']]).toEqual([201, 'true']);
    expect((await c.get('/constituents')).body.total).toBe(1);
    // The retry's answer is kept: a third try replays it.
    expect((await c.post('/constituents', { LastName: 'Twice?' }, key('e'))).raw).toBe(again.raw);
  });

  it('resumes an upsert that created its record: the same record, created, once', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    const upsert = '/constituents?mode=upsert&matchOn=email';
    settle.fail('error');
    expect((await c.post(upsert, { LastName: 'Up', Email1: 'up@example.org' }, key('u'))).status).toBe(500);
    settle.fail(null);
    const again = await c.post(upsert, { LastName: 'Up', Email1: 'up@example.org' }, key('u'));
    expect([again.status, again.body.created, again.headers['idempotent-replayed']]).toEqual([201, true, 'true']);
    expect((await c.get('/constituents')).body.total).toBe(1);
    expect((await feed(c)).filter((type: string) => type.startsWith('constituent.'))).toEqual(['constituent.created']);
  });

  it('is 422 idempotency_key_reused for another body on that key, writing nothing', async () => {
    const { api } = await t.team();
    const c = api.Integration;
    settle.fail('error');
    await c.post('/constituents', { LastName: 'One' }, key('d'));
    settle.fail(null);
    expect((await c.post('/constituents', { LastName: 'Other' }, key('d'))).status).toBe(422);
    expect((await c.get('/constituents')).body.total).toBe(1);
  });
});

describe('a keyed create answered 503 write_pending, then erased before its retry (decisions.md §17 with §11)', () => {
  it('answers the retry without the erased values, and keeps none of them under the key', async () => {
    const { api, admin } = await t.team();
    const c = api.Integration;
    const body = { FirstName: 'Zephyrine', LastName: 'Quarternmark', Email1: 'zephyrine.q@example.org' };
    settle.fail('time-out');
    const first = await c.post('/constituents', body, key('erased'));
    expect(first.status, first.raw).toBe(503);
    settle.fail(null);
    // Readable once the background wait has ended: the key is left for the retry.
    await expect.poll(async () => (await c.get('/constituents')).body.total, { timeout: 30_000 }).toBe(1);
    const id = (await c.get('/constituents')).body.constituents[0].PkConstituent;
    expect((await admin.post(`/constituents/${id}/erase`, { reason: 'asked' })).status).toBe(200);

    const answer = await retryUntilAnswered(() => c.post('/constituents', body, key('erased')));
    // Answered from the log as the erasure left it: the same record, its personal fields null.
    expect([answer.status, answer.body.constituent.PkConstituent, answer.body.constituent.LastName]).toEqual([201, id, null]);
    const replay = await c.post('/constituents', body, key('erased'));
    for (const text of [answer.raw, replay.raw]) for (const value of Object.values(body)) expect(text).not.toContain(value);
    expect((await c.get('/constituents')).body.total).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { http, useBuiltService } from '../support/process.js';

/**
 * decisions.md §11 across a crash between a keyed write's commit and its kept answer: the server
 * kills itself (SIGKILL, the test's fault point TURNOUT_TEST_KILL_BEFORE_KEEPING) once the create
 * has committed, before its answer is stored. Restarted, the retry with the same key takes the
 * key over (its process is gone) and answers from the record the first try wrote: one record.
 */
const service = useBuiltService('turnout-idempotency-resume-crash-');

describe('a keyed create whose server died after the commit, before the answer', () => {
  it('is answered from its record by the retry after the restart, and written once', async () => {
    const env = { TURNOUT_DATA_DIR: service.freshDir(), TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' };
    const first = await service.start({ env: { ...env, TURNOUT_TEST_KILL_BEFORE_KEEPING: '1' } });
    const admin = http(`${first.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Crash' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Sync', scope: 'read_write' })).body.key as string;
    const body = JSON.stringify({ FirstName: 'Ada', LastName: 'Once' });
    const send = (url: string) =>
      fetch(`${url}/api/v1/constituents`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'resume-1' }, body });

    const cut = await send(first.url).then(
      (r) => r.status,
      () => 'cut',
    );
    expect(cut).toBe('cut');
    await first.stop();

    const second = await service.start({ env });
    const again = await send(second.url);
    expect([again.status, again.headers.get('idempotent-replayed'), again.headers.get('etag')]).toEqual([201, 'true', '"1"']);
    const created = ((await again.json()) as { constituent: { PkConstituent: number } }).constituent;
    expect(created).toMatchObject({ FirstName: 'Ada', LastName: 'Once' });
    const api = http(`${second.url}/api/v1`, key);
    expect((await api.get('/constituents')).body.constituents.map((c: { PkConstituent: number }) => c.PkConstituent)).toEqual([created.PkConstituent]);
    const changes = (await api.get('/changes?limit=100')).body.changes.filter((c: { type: string }) => c.type === 'constituent.created');
    expect(changes).toHaveLength(1);
    // Kept now: a third try replays it byte for byte.
    const third = await send(second.url);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect(await third.json()).toEqual({ created: true, constituent: created });
  }, 120_000);
});

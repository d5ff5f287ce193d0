import { describe, expect, it } from 'vitest';
import { http, useBuiltService } from '../support/process.js';

/**
 * decisions.md §11 across a crash: the stored answers are committed on the idempotency store's
 * thread, and an answer is sent only once that commit is durable, so a server killed (SIGKILL,
 * no drain) the moment its answers arrived replays them after a restart and writes nothing again.
 */
const service = useBuiltService('turnout-idempotency-crash-');

describe('answers kept under an Idempotency-Key, the server killed once they were sent', () => {
  it('replays a single create and a batch after the restart, and writes neither again', async () => {
    const env = { TURNOUT_DATA_DIR: service.freshDir(), TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' };
    const first = await service.start({ env });
    const admin = http(`${first.url}/admin/v1`, 'test-admin-token');
    const team = (await admin.post('/teams', { name: 'Crash' })).body.team.id;
    const key = (await admin.post(`/teams/${team}/api-keys`, { name: 'Sync', scope: 'read_write' })).body.key as string;
    const single = { FirstName: 'Ada', LastName: 'Kept', Email1: 'ada@example.org' };
    const batch = { items: Array.from({ length: 200 }, (_, i) => ({ FirstName: 'Batch', LastName: `Row${i}`, Email1: `row${i}@example.org` })) };
    const send = (url: string, path: string, body: unknown, k: string) => http(`${url}/api/v1`, key).post(path, body, { 'idempotency-key': k });

    const answers = await Promise.all([send(first.url, '/constituents', single, 'crash-single'), send(first.url, '/constituents/batch', batch, 'crash-batch')]);
    first.process.kill('SIGKILL');
    await first.stop();
    expect(answers.map((a) => a.status)).toEqual([201, 200]);

    const second = await service.start({ env });
    const again = await Promise.all([send(second.url, '/constituents', single, 'crash-single'), send(second.url, '/constituents/batch', batch, 'crash-batch')]);
    expect(again.map((a) => [a.status, a.headers.get('idempotent-replayed')])).toEqual([
      [201, 'true'],
      [200, 'true'],
    ]);
    expect(again.map((a) => a.raw)).toEqual(answers.map((a) => a.raw));
    expect((await http(`${second.url}/api/v1`, key).get('/constituents?pageSize=1')).body.total).toBe(201);
  }, 120_000);
});

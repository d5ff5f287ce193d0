import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { http, useBuiltService } from '../support/process.js';
import { waitUntil } from '../support/nats.js';

/**
 * decisions.md §13: on SIGINT the import stops sending, waits for the requests in flight and
 * exits 130; running the same file again then writes every row once (the Idempotency-Key of each
 * row is the file's hash and the row's number).
 */
const service = useBuiltService('turnout-cli-interrupt-');
// Many batches (cli/import.ts BATCH_ROWS) beyond those in flight, so an interrupt leaves some unsent.
const ROWS = 10_000;

describe('an interrupted import', () => {
  it('exits 130 part-way, and the re-run creates nothing twice and every row once', async () => {
    const server = await service.start({ env: { TURNOUT_DATA_DIR: service.freshDir(), TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' } });
    const main = service.built('cli/main.js');
    const env = { TURNOUT_URL: server.url, TURNOUT_ADMIN_TOKEN: 'test-admin-token' };
    const team = JSON.parse((await runCli(main, ['teams', 'create', '--name', 'Big list'], env)).stdout).team.id as number;
    const key = (await runCli(main, ['keys', 'create', '--team', String(team), '--name', 'Check'], env)).stdout.trim().split('\n').at(-1);
    const file = path.join(service.freshDir(), 'people.csv');
    writeFileSync(file, ['FirstName,LastName,Email1', ...Array.from({ length: ROWS }, (_, i) => `Person,${i + 1},p${i + 1}@example.org`)].join('\n') + '\n');

    const first = startCli(main, ['import', file, '--team', String(team)], env);
    // The first progress line comes at 10 % of the rows: sending is under way.
    await waitUntil('the first progress line', async () => /import: \d+\/10000/.test(first.stderr()), 60_000);
    first.child.kill('SIGINT');
    expect(await first.exited).toBe(130);
    expect(first.stderr()).toMatch(/interrupted; waiting for \d+ requests in flight/);
    const summary = /(\d+) written, 0 failed, (\d+) not sent\n$/.exec(first.stdout());
    expect(summary, first.stdout()).not.toBeNull();
    const [written, notSent] = [Number(summary![1]), Number(summary![2])];
    expect(written + notSent).toBe(ROWS);
    expect(notSent).toBeGreaterThan(0);
    const api = http(`${server.url}/api/v1`, key);
    // Every request that was in flight has answered: what the log holds is what was counted.
    expect((await api.get('/constituents?pageSize=1')).body.total).toBe(written);

    const again = await runCli(main, ['import', file, '--team', String(team)], env);
    expect([again.code, again.stdout]).toEqual([0, `${ROWS} valid, 0 invalid\n${ROWS} written, 0 failed\n`]);
    expect((await api.get('/constituents?pageSize=1')).body.total).toBe(ROWS);
    // Each row once: the last row's email names one constituent, and so does the first's.
    for (const n of [1, Math.ceil(written / 2), written + 1, ROWS]) expect((await api.get(`/constituents?email=p${n}@example.org`)).body.total, `row ${n}`).toBe(1);
  }, 240_000);
});

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { startTestApp } from '../support/app.js';

/**
 * Two erasures of one person at once (a client's retry while the first runs, or a start's resume
 * beside a new request): each step of the second runs after the first's, so neither fails on the
 * other's half-rewritten mail files.
 */
it('two erasures of the same constituent at once both answer 200 and leave no mail naming it', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-erase-concurrent-'));
  const t = await startTestApp({ dataDir: dir });
  try {
    const made = await t.team();
    const email = 'qzrevmail@example.org';
    const id = (await made.api.Integration.post('/constituents', { FirstName: 'Qzrev', LastName: 'Mail', Email1: email })).body.constituent.PkConstituent as number;
    const outbox = path.join(dir, 'outbox');
    mkdirSync(outbox, { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(path.join(outbox, `n${i}.eml`), `To: ${email}\n\nHello ${'x'.repeat(20000)}\n`, { mode: 0o600 });
    const [a, b] = await Promise.all([made.admin.post(`/constituents/${id}/erase`, {}), made.admin.post(`/constituents/${id}/erase`, {})]);
    const left = readdirSync(outbox).filter((n) => readFileSync(path.join(outbox, n), 'utf8').includes(email));
    const tmps = readdirSync(outbox).filter((n) => n.endsWith('.tmp'));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(left).toEqual([]);
    expect(tmps).toEqual([]);
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { READ_MODELS_FILE } from '../../runtime/read-models.js';
import { startTestApp } from '../support/app.js';

/**
 * Read models built beside the live ones (a `turnout rebuild --prepare` for the next release, a
 * rebuild killed half-way) are copies of every row: after an erasure's answer none is left holding
 * the person (decisions.md §17), and a prepare made before it is not adopted.
 */
it('a start removes a killed rebuild\'s file; an erasure removes the prepared read models and a killed rebuild\'s files, and says so', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-erase-prepared-'));
  const reports: string[] = [];
  // A rebuild killed before this start: the start removes its file (it holds the data dir now).
  writeFileSync(path.join(dir, `${READ_MODELS_FILE}.rebuild`), 'rows of a rebuild');
  const t = await startTestApp({ dataDir: dir }, { report: (m) => reports.push(m) });
  try {
    expect(reports).toContain(`read models: removed ${READ_MODELS_FILE}.rebuild, left by a rebuild that did not finish`);
    const made = await t.team();
    const email = 'qzprepared@example.org';
    const id = (await made.api.Integration.post('/constituents', { FirstName: 'Qzprep', LastName: 'Ared', Email1: email })).body.constituent.PkConstituent as number;
    const prepared = 'readmodels.prepared-0123456789abcdef.sqlite';
    writeFileSync(path.join(dir, prepared), `a row of ${email}`);
    writeFileSync(path.join(dir, `${READ_MODELS_FILE}.rebuild-search`), `a row of ${email}`);
    expect((await made.admin.post(`/constituents/${id}/erase`, {})).status).toBe(200);
    expect(readdirSync(dir).filter((f) => f.includes('prepared') || f.includes('.rebuild'))).toEqual([]);
    expect(reports).toEqual(
      expect.arrayContaining([
        `erasure: removed ${prepared}, read models prepared from values the erasure removes; prepare again once it has finished`,
        `read models: removed ${READ_MODELS_FILE}.rebuild-search, left by a rebuild that did not finish`,
      ]),
    );
  } finally {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../eventlog/sealing.js';
import { Erasure, type ErasureStores } from '../../runtime/erasure.js';
import { backoffDelay } from '../../eventlog/backoff.js';
import { ERASURE_RETRY, readinessOf, scrubbedError, type PendingErasure } from '../../runtime/erasure-pending.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('turnout-erasure-pending-');

describe('the delay between attempts at an unfinished erasure', () => {
  it('is 1 s after the first failure, doubling to at most 60 s (each within ±10%, the middle drawn here)', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => backoffDelay(ERASURE_RETRY, n, () => 0.5))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000]);
  });
});

describe('an attempt\u2019s error as it is logged and shown', () => {
  it('holds none of the person\u2019s values, as written, lower-cased or JSON-escaped, and is kept short', () => {
    const values = ['Mkfirst', 'Mk "Quoted" Last', 'mk@example.org'];
    const forms = [...values, 'mkfirst', JSON.stringify(values[1]).slice(1, -1)];
    const err = new SyntaxError(`Unexpected token near "${forms[4]}" in ${forms.join(' / ')}`);
    for (const v of forms) expect(err.message).toContain(v);
    const text = scrubbedError(err, values);
    for (const v of forms) expect(text).not.toContain(v);
    expect(text).toContain('Unexpected token');
    expect(scrubbedError(new Error('x'.repeat(1_000)), values).length).toBeLessThanOrEqual(300);
    // Another record's text that an error quotes (JSON.parse's snippet, inner quotes as they are).
    let bad = '';
    try {
      JSON.parse('{"Email1":"mkother@example.org","FirstName":Mkother}');
    } catch (e) {
      bad = scrubbedError(e, values);
      expect((e as Error).message).toContain('Mkother');
    }
    expect(bad).not.toContain('Mkother');
    expect(bad).not.toContain('mkother@');
    // A middle initial where it stands alone, not every letter of the text.
    expect(scrubbedError(new Error('a rewrite failed at J. (j+1)'), ['J'])).toBe('a rewrite failed at [erased]. ([erased]+1)');
  });
});

describe('readiness while erasures are unfinished', () => {
  const pending = (p: Partial<PendingErasure>): PendingErasure => ({ PkConstituent: 1, teamId: 1, state: 'running', fromPreviousRun: false, attempts: 0, lastError: null, lastStep: 'journal', startedAt: '', nextAttemptAt: null, ...p });
  it('is unaffected by one running for the first time, held by a previous run\u2019s, and reconnecting once an attempt failed', () => {
    expect(readinessOf([])).toBeNull();
    expect(readinessOf([pending({})])).toBeNull();
    expect(readinessOf([pending({ fromPreviousRun: true, state: 'waiting' })])).toEqual({ name: 'erasures', state: 'catching_up', behind: 1 });
    expect(readinessOf([pending({ fromPreviousRun: true }), pending({ attempts: 2, state: 'retrying' })])).toEqual({ name: 'erasures', state: 'reconnecting', behind: 2 });
  });
});

describe('a journal written before the steps were recorded', () => {
  it('gains the column, and its erasure is listed as starting from the beginning', () => {
    const dir = tempDir();
    const old = new Database(path.join(dir, 'erasures.sqlite'));
    old.exec(`CREATE TABLE erasures (id INTEGER PRIMARY KEY, team INTEGER NOT NULL, reason TEXT, source TEXT NOT NULL, key_name TEXT, sealed TEXT NOT NULL, started_at TEXT NOT NULL)`);
    old.prepare(`INSERT INTO erasures VALUES (7, 3, NULL, 'Application', NULL, 'sealed:v1:x', '2026-11-27T12:00:00.000Z')`).run();
    old.close();
    const stores = { dataDir: dir, mainSealer: new Sealer(Sealer.newKey()), webhookDb: null, readModelsFile: null, report: () => undefined } as unknown as ErasureStores;
    const erasure = new Erasure(stores);
    try {
      expect(erasure.pending()).toEqual([
        { PkConstituent: 7, teamId: 3, state: 'waiting', fromPreviousRun: true, attempts: 0, lastError: null, lastStep: 'journal', startedAt: '2026-11-27T12:00:00.000Z', nextAttemptAt: null },
      ]);
    } finally {
      erasure.close();
    }
  });
});

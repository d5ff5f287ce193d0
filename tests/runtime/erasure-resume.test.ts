import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../eventlog/sealing.js';
import { Erasure, type ErasureStores } from '../../runtime/erasure.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('turnout-erasure-');

// Only the journal is touched here: the stores an erasure rewrites are never reached.
const stores = (dataDir: string) => ({ dataDir, mainSealer: new Sealer(Sealer.newKey()), webhookDb: null, readModelsFile: null, report: () => undefined }) as unknown as ErasureStores;

describe('an erasure a previous run began (decisions.md §17)', () => {
  it('is left for the next start, untouched and without an error, when the process stops before its read models caught up', async () => {
    const dir = tempDir();
    new Erasure(stores(dir)).close();
    const journal = new Database(path.join(dir, 'erasures.sqlite'));
    journal.prepare(`INSERT INTO erasures (id, team, reason, source, key_name, sealed, started_at) VALUES (7, 1, NULL, 'Public API', NULL, 'sealed:v1:x', '2026-11-27T12:00:00.000Z')`).run();
    journal.close();

    const stopping = new Erasure(stores(dir));
    expect(stopping.status()).toEqual({ name: 'erasures', state: 'catching_up', behind: 1 });
    stopping.close();
    // The start's resume comes after the read models' catch-up, which a stop may cut short.
    await expect(stopping.resume()).resolves.toBeUndefined();

    const next = new Erasure(stores(dir));
    expect(next.status()).toEqual({ name: 'erasures', state: 'catching_up', behind: 1 });
    next.close();
  });
});

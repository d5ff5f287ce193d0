import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadStore } from '../../projections/store/sqlite.js';
import { readStoreContract } from './readstore.contract.js';

readStoreContract('SqliteReadStore (:memory:)', async () => {
  const store = new SqliteReadStore(':memory:');
  return { store, cleanup: () => store.close() };
});

readStoreContract('SqliteReadStore (file)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'turnout-readstore-'));
  const store = new SqliteReadStore(join(dir, 'readmodels.sqlite'));
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

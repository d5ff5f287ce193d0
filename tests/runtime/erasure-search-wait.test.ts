import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { searchSynced } from '../../runtime/erasure.js';

/**
 * An erasure waits for the search index to drop the erased row's text (decisions.md §17): the
 * rows its search tables noted before it looked must be synced. Rows noted after are other
 * writes; under a steady write rate the tables are never empty, and the erasure must not wait
 * for that.
 */
describe("an erasure's wait for the search index", () => {
  it('ends once the rows pending when it looked are synced, though later writes keep noting others', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE "constituents__pending0" (row INTEGER PRIMARY KEY, old TEXT)');
    const note = db.prepare('INSERT INTO "constituents__pending0" (row, old) VALUES (?, ?)');
    note.run(1, 'erased person');
    note.run(2, null);
    const waited = searchSynced(db, 2_000);
    // A sync takes what waits, then writes go on: a new row is noted before the erasure looks again.
    await new Promise((resolve) => setTimeout(resolve, 60));
    db.exec('DELETE FROM "constituents__pending0"');
    note.run(3, null);
    await expect(waited).resolves.toBeUndefined();
    db.close();
  });

  it('keeps waiting while a row pending when it looked is still there', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE "constituents__pending0" (row INTEGER PRIMARY KEY, old TEXT)');
    db.prepare('INSERT INTO "constituents__pending0" (row, old) VALUES (?, ?)').run(1, 'erased person');
    await expect(searchSynced(db, 200)).rejects.toThrow('did not bring their search index up to date in time');
    db.close();
  });
});

import { describe, expect, it, vi } from 'vitest';
import { eq } from '../../projections/store/port.js';
import { SqliteReadCore } from '../../projections/store/sqlite-core.js';
import { FreshFileStore } from '../../runtime/rebuild-store.js';

describe("the rebuild's store of a file built from nothing", () => {
  it('answers a key it never wrote without asking SQLite, and every key it wrote from SQLite', async () => {
    const core = new SqliteReadCore(':memory:');
    core.define({ name: 'things', idField: 'id' });
    core.define({ name: 'others', idField: 'id' });
    const store = new FreshFileStore(core);
    const asked = vi.spyOn(core, 'get');

    expect(await store.get('things', 1)).toBeNull();
    expect(asked).not.toHaveBeenCalled();

    await store.put('things', { id: 1, n: 1 });
    await store.put('things', { id: 1, n: 2 });
    expect(await store.insertIfAbsent('things', { id: 2, n: 3 })).toBe(true);
    expect(await store.insertIfAbsent('things', { id: 2, n: 4 })).toBe(false);
    // The key as text or number is one key, as in SQLite (sqlite-schema.ts keyOf).
    expect(await store.get('things', '1')).toEqual({ id: 1, n: 2 });
    expect(await store.get('things', 2)).toEqual({ id: 2, n: 3 });
    expect(asked).toHaveBeenCalledTimes(2);
    // Another collection's same id was never written there.
    expect(await store.get('others', 1)).toBeNull();
    expect(asked).toHaveBeenCalledTimes(2);
    // A collection the file does not have is an error, never an empty answer.
    await expect(store.get('unknown', 1)).rejects.toThrow('unknown read-model collection unknown');

    await store.remove('things', 1);
    expect(await store.get('things', 1)).toBeNull();
    // A document another write changed is read as it is now.
    await store.updateWhere('things', eq('id', 2), { n: 5 });
    expect(await store.get('things', 2)).toEqual({ id: 2, n: 5 });
    core.close();
  });
});

import type { Projector } from '../../projections/engine/projector.js';

/**
 * Projectors for the offline rebuild's tests (runtime/rebuild.ts), loaded in each of its threads
 * from RebuildOptions.projectorsModule: `ledger` reads its own collection (a running count), so it
 * is built on the rebuild's own thread; `journal` writes a row per event and reads nothing, so it
 * is built apart. Either throws on a `Boom` event while TURNOUT_TEST_REBUILD_FAIL names it.
 */
const failing = (name: string, type: string) => {
  if (type === 'Boom' && process.env.TURNOUT_TEST_REBUILD_FAIL === name) throw new Error(`${name} refuses Boom`);
};

const ledger: Projector = {
  name: 'ledger',
  version: 1,
  collections: [{ name: 'ledger', idField: 'id' }],
  async apply(event, store) {
    failing('ledger', event.type);
    const doc = (await store.get<{ id: string; n: number }>('ledger', 'n')) ?? { id: 'n', n: 0 };
    await store.put('ledger', { ...doc, n: doc.n + 1 });
  },
};

const journal: Projector = {
  name: 'journal',
  version: 1,
  independent: true,
  collections: [{ name: 'journal', idField: 'id', indexes: [['team']], sorts: [{ where: ['team'], sort: [{ field: 'type', dir: 'desc' }] }], search: [{ fields: ['type'], where: ['team'] }] }],
  async apply(event, store) {
    failing('journal', event.type);
    await store.put('journal', { id: Number(event.position.commit), team: event.metadata.team, type: event.type });
  },
};

export const projectors: Projector[] = [ledger, journal];

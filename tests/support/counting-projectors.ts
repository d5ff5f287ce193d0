import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import type { Projector } from '../../projections/engine/projector.js';

/**
 * Projectors for the projector thread's tests, loaded inside the thread (ThreadSettings
 * .projectorsModule). Each counter counts what it applied and, unlike the product's projectors,
 * is not idempotent: an event applied twice or out of order shows as a violation.
 * Settings come from the environment the thread is started with.
 */
export interface CounterDoc {
  id: 'n';
  applies: number;
  violations: number;
  last: string;
  /** The thread run that made the document: a rebuild makes it again. */
  madeBy: string;
}

const RUN = randomUUID();

/** A counter's apply: one more application, and a violation when the event is not after the last. */
export function countApply(name: string): Projector['apply'] {
  return async (event, store) => {
    const c = (await store.get<CounterDoc>(name, 'n')) ?? { id: 'n', applies: 0, violations: 0, last: '0', madeBy: RUN };
    const inOrder = event.position.commit > BigInt(c.last);
    await store.put(name, { ...c, applies: c.applies + 1, violations: c.violations + (inOrder ? 0 : 1), last: String(event.position.commit) });
  };
}

function counter(name: string, version: number): Projector {
  return { name, version, collections: [{ name, idField: 'id' }], apply: countApply(name) };
}

/** Fails every `Boom` event while the file TURNOUT_TEST_FUSE names exists. */
const fragile: Projector = {
  name: 'fragile',
  version: 1,
  collections: [],
  async apply(event) {
    const fuse = process.env.TURNOUT_TEST_FUSE;
    if ((event.type as string) === 'Boom' && fuse && existsSync(fuse)) throw new Error('the fuse is in');
  },
};

/**
 * Kills its thread at a `Crash` event (an uncaught error, as a bug or an out-of-memory would) while
 * the file TURNOUT_TEST_CRASH names exists; a file holding `once` is removed first, so only the
 * first thread to reach the event dies.
 */
const crashing: Projector = {
  name: 'crashing',
  version: 1,
  collections: [],
  apply(event) {
    const file = process.env.TURNOUT_TEST_CRASH;
    if ((event.type as string) !== 'Crash' || !file || !existsSync(file)) return Promise.resolve();
    if (readFileSync(file, 'utf8') === 'once') rmSync(file);
    return new Promise(() => {
      setImmediate(() => {
        throw new Error('the projector thread crashed');
      });
    });
  },
};

export const projectors: Projector[] = [
  counter('alpha', Number(process.env.TURNOUT_TEST_ALPHA_VERSION ?? 1)),
  counter('beta', Number(process.env.TURNOUT_TEST_BETA_VERSION ?? 1)),
  fragile,
  crashing,
];

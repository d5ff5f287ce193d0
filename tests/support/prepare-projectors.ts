import { randomUUID } from 'node:crypto';
import type { Projector } from '../../projections/engine/projector.js';

/**
 * Projectors for `turnout rebuild --prepare`'s tests (runtime/prepare.ts), as two releases see
 * them: `kept` stays at version 1, `changed` is at TURNOUT_TEST_CHANGED_VERSION (read at each
 * look, so one test process can play both releases). Each counts what it applied and, unlike the
 * product's projectors, is not idempotent: an event applied twice or out of order shows as a
 * violation. Either ends its process at once (SIGKILL, as an operator's kill -9 or an
 * out-of-memory kill would) at a `Kill` event while TURNOUT_TEST_PREPARE_KILL is set.
 */
export interface CounterDoc {
  id: 'n';
  applies: number;
  violations: number;
  last: string;
  /** The process (or thread) that made the document: a build from the log makes it again. */
  madeBy: string;
}

const RUN = randomUUID();

function counter(name: string, version: () => number): Projector {
  return {
    name,
    get version() {
      return version();
    },
    collections: [{ name, idField: 'id' }],
    async apply(event, store) {
      if ((event.type as string) === 'Kill' && process.env.TURNOUT_TEST_PREPARE_KILL) process.kill(process.pid, 'SIGKILL');
      const c = (await store.get<CounterDoc>(name, 'n')) ?? { id: 'n', applies: 0, violations: 0, last: '0', madeBy: RUN };
      const inOrder = event.position.commit > BigInt(c.last);
      await store.put(name, { ...c, applies: c.applies + 1, violations: c.violations + (inOrder ? 0 : 1), last: String(event.position.commit) });
    },
  };
}

export const projectors: Projector[] = [counter('kept', () => 1), counter('changed', () => Number(process.env.TURNOUT_TEST_CHANGED_VERSION ?? 1))];

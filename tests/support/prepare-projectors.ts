import type { Projector } from '../../projections/engine/projector.js';
import { countApply } from './counting-projectors.js';

export type { CounterDoc } from './counting-projectors.js';

/**
 * Projectors for `turnout rebuild --prepare`'s tests (runtime/prepare.ts), as two releases see
 * them: `kept` stays at version 1, `changed` is at TURNOUT_TEST_CHANGED_VERSION (read at each
 * look, so one test process can play both releases). Each counts what it applied and, unlike the
 * product's projectors, is not idempotent: an event applied twice or out of order shows as a
 * violation. Either ends its process at once (SIGKILL, as an operator's kill -9 or an
 * out-of-memory kill would) at a `Kill` event while TURNOUT_TEST_PREPARE_KILL is set.
 */
function counter(name: string, version: () => number): Projector {
  const count = countApply(name);
  return {
    name,
    get version() {
      return version();
    },
    collections: [{ name, idField: 'id' }],
    async apply(event, store) {
      if ((event.type as string) === 'Kill' && process.env.TURNOUT_TEST_PREPARE_KILL) process.kill(process.pid, 'SIGKILL');
      await count(event, store);
    },
  };
}

export const projectors: Projector[] = [counter('kept', () => 1), counter('changed', () => Number(process.env.TURNOUT_TEST_CHANGED_VERSION ?? 1))];

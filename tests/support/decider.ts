import { expect } from 'vitest';
import type { DomainEvent, Evolver } from '../../domain/shared/events.js';
import { DomainError } from '../../domain/shared/errors.js';

export const TEAM = 1;
const at = '2026-11-01T12:00:00.000Z';

/** `thenFails(code, NO_FIELD)`: the error names no field (a field left out is not checked). */
export const NO_FIELD = null;

/** given(events).when(decide).then(events) / .thenFails(code, field): pure decider tests. */
export function given<S>(evolver: Evolver<S>, events: DomainEvent[] = [], team = TEAM) {
  const state = events.map((e) => ({ ...e, metadata: { team, at } })).reduce(evolver.evolve, evolver.initial());
  return {
    state,
    when(decide: (state: S) => DomainEvent[]) {
      let result: DomainEvent[] | undefined;
      let error: unknown;
      try {
        result = decide(state);
      } catch (e) {
        error = e;
      }
      return {
        then(expected: DomainEvent[] | ((events: DomainEvent[]) => void)) {
          if (error) throw error;
          if (typeof expected === 'function') expected(result!);
          else expect(result).toEqual(expected);
        },
        thenFails(code: string, field?: string | typeof NO_FIELD) {
          expect(error, `expected ${code} but decided ${JSON.stringify(result)}`).toBeInstanceOf(DomainError);
          expect((error as DomainError).code).toBe(code);
          if (field === NO_FIELD) expect((error as DomainError).field).toBeUndefined();
          else if (field !== undefined) expect((error as DomainError).field).toBe(field);
        },
      };
    },
  };
}

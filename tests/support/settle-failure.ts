import { afterAll, afterEach, beforeAll } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { NotYetReadable } from '../../projections/engine/status.js';
import { startTestApp, type TestApp } from './app.js';

/**
 * One test app for a file whose writes' wait for the read models can be made to fail after the
 * read models really settled: `'time-out'` as the wait's own time-out (NotYetReadable), `'error'`
 * as any other failure after the commit. Reset after each test.
 */
export function appWithFailingSettle(): { app: () => TestApp; fail: (how: 'time-out' | 'error' | null) => void } {
  let t: TestApp;
  let failing: 'time-out' | 'error' | null = null;
  beforeAll(async () => {
    t = await startTestApp();
    const services = t.runtime.services;
    const real = services.settle;
    services.settle = async (position: Position | null, ctx) => {
      await real(position, ctx);
      if (position && failing === 'time-out') throw new NotYetReadable(position, 15_000);
      if (position && failing === 'error') throw new Error('the read store went away');
    };
  });
  afterAll(() => t.close());
  afterEach(() => {
    failing = null;
  });
  return { app: () => t, fail: (how) => (failing = how) };
}

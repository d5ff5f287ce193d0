import type { TestApp } from './app.js';

/** One call of the log held at its start: `reached` once it is, and `release` lets it go on. */
export interface Held {
  reached: Promise<void>;
  /** Whether the call came (a write that never makes it is not held). */
  readonly wasReached: boolean;
  release(): void;
}

/**
 * Holds the first call of the test app's log `method` on `stream` (or a stream it accepts) that comes once this is called:
 * a scripted interleaving of two requests, where a race would need many tries. The log is the
 * real one otherwise, and put back once the held call was let go.
 */
export function holdLogCall(t: TestApp, method: 'append' | 'readStream', stream: string | ((stream: string) => boolean)): Held {
  const held = typeof stream === 'string' ? (s: string) => s === stream : stream;
  const log = t.runtime.services.log;
  let reachedNow!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((r) => (reachedNow = r));
  const released = new Promise<void>((r) => (release = r));
  let armed = true;
  let wasReached = false;
  t.runtime.services.log = new Proxy(log, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== 'function') return v;
      if (prop !== method) return v.bind(target);
      return async (s: string, ...rest: unknown[]) => {
        if (armed && held(s)) {
          armed = false;
          wasReached = true;
          reachedNow();
          await released;
        }
        return (v as (...a: unknown[]) => unknown).call(target, s, ...rest);
      };
    },
  });
  return {
    reached,
    get wasReached() {
      return wasReached;
    },
    release: () => {
      t.runtime.services.log = log;
      release();
    },
  };
}

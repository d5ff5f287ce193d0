import type { EventLog } from '../../eventlog/port.js';
import type { TestApp } from './app.js';

/**
 * Makes a test app's log fail the constituent appends numbered in `failing` (counted from 1 over
 * every request until restored) with `error` (by default a disk that fails part-way through a
 * batch). Answers the real log, to put back (`t.runtime.services.log = log`).
 */
export function failingAppends(t: TestApp, failing: number[], error: () => Error = () => new Error('disk full')): EventLog {
  const log = t.runtime.services.log;
  let appends = 0;
  t.runtime.services.log = new Proxy(log, {
    get(target, prop) {
      if (prop === 'append')
        return (stream: string, ...rest: Parameters<EventLog['append']> extends [string, ...infer R] ? R : never) =>
          stream.startsWith('constituent-') && failing.includes(++appends) ? Promise.reject(error()) : target.append(stream, ...rest);
      const v = Reflect.get(target, prop);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return log;
}

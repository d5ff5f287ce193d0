import { afterEach, describe, expect, it } from 'vitest';
import { handle } from '../../commands/aggregate.js';
import type { WriteContext } from '../../commands/context.js';
import type { Evolver } from '../../domain/shared/events.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { EventLog } from '../../eventlog/port.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';

const counter: Evolver<number> = { initial: () => 0, evolve: (n) => n + 1 };
const ctx = (ifMatch?: number): WriteContext => ({
  team: 1,
  source: 'Application',
  keyName: null,
  correlationId: 'c',
  now: new Date('2030-01-01T00:00:00Z'),
  revisions: new Map(),
  ...(ifMatch === undefined ? {} : { ifMatch: { stream: 's-1', matches: (r: number) => r === ifMatch } }),
});
const write = (n = 1) => () => Array.from({ length: n }, () => ({ type: 'Bumped', data: {} }));

let log: SqliteEventLog;
afterEach(() => log?.close());

describe('If-Match in handle() (decisions.md §11)', () => {
  it('stamps every event of one append with the one revision that write makes', async () => {
    log = new SqliteEventLog(':memory:');
    await handle(log, 's-1', counter, ctx(), write(2));
    const c = ctx();
    await handle(log, 's-1', counter, c, write(3));
    expect((await log.readStream('s-1')).map((e) => e.metadata.revision)).toEqual([1, 1, 2, 2, 2]);
    expect(c.revisions!.get('s-1')).toBe(2);
  });

  it('is 412 when a write lands between the check and the append, and writes nothing of its own', async () => {
    log = new SqliteEventLog(':memory:');
    await handle(log, 's-1', counter, ctx(), write());
    // Another writer appends after this command has read the stream, before its append.
    let raced = false;
    const racing: EventLog = Object.assign(Object.create(log), {
      append: async (...args: Parameters<EventLog['append']>) => {
        if (!raced) {
          raced = true;
          await log.append('s-1', [{ type: 'Bumped', data: {}, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'other', at: 'x', revision: 2 } }], 0n);
        }
        return log.append(...args);
      },
    });
    // The race is 412 even where a conflict would otherwise answer something else (a task's task_busy).
    const busy = () => {
      throw new DomainError('task_busy', 'busy');
    };
    const err = await handle(racing, 's-1', counter, ctx(1), write(), { onConflict: busy }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err.code).toBe('precondition_failed');
    expect((await log.readStream('s-1')).map((e) => e.metadata.correlationId)).toEqual(['c', 'other']);
  });

  it('applies only to the stream it names', async () => {
    log = new SqliteEventLog(':memory:');
    await handle(log, 's-2', counter, ctx(7), write());
    expect(await log.readStream('s-2')).toHaveLength(1);
  });
});

import { describe, expect, it } from 'vitest';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { AsOf } from '../../dispatcher/history.js';
import type { RecordedEvent } from '../../domain/shared/events.js';

const meta = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' };
const counter = { initial: () => 0, evolve: (n: number) => n + 1 };

/** A log whose reads count the events they hand back. */
function counting(log: SqliteEventLog) {
  const read = { events: 0 };
  const tally = (events: RecordedEvent[]) => ((read.events += events.length), events);
  const counted = Object.create(log) as SqliteEventLog;
  counted.readStream = async (s) => tally(await log.readStream(s));
  counted.readStreamUntil = async (s, p) => tally(await log.readStreamUntil(s, p));
  return { counted, read };
}

describe('reading a record as of an event being dispatched', () => {
  it('reads the stream only up to the event, not what was appended to it since', async () => {
    const log = new SqliteEventLog(':memory:');
    await log.append('thing-1', [{ type: 'Made', data: {}, metadata: meta }], 'no_stream');
    const second = await log.append('thing-1', [{ type: 'Changed', data: {}, metadata: meta }], 0n);
    for (let i = 0; i < 200; i++) await log.append('thing-1', [{ type: 'Changed', data: {}, metadata: meta }], 'any');
    const [event] = (await log.readStream('thing-1')).slice(1, 2);
    const { counted, read } = counting(log);
    const h = new AsOf(counted, second.position);
    expect(await h.state('thing-1', counter)).toBe(2);
    expect(await h.around(event, counter)).toMatchObject({ before: 1, after: 2 });
    expect(read.events).toBe(2);
    await log.close();
  });

  it('still reads the events appended together with it when asked for companions', async () => {
    const log = new SqliteEventLog(':memory:');
    const r = await log.append('thing-1', ['Made', 'Defaulted', 'Defaulted'].map((type) => ({ type, data: {}, metadata: meta })), 'no_stream');
    await log.append('thing-1', [{ type: 'Changed', data: {}, metadata: meta }], 'any');
    const [made] = await log.readStream('thing-1');
    const h = new AsOf(log, made.position);
    expect(r.nextExpectedRevision).toBe(2n);
    const { before, after, write } = await h.around(made, counter, (e) => e.type === 'Defaulted');
    expect({ before, after, opens: write.opens, joined: write.joined.map((e) => [e.type, e.revision]) }).toEqual({ before: 0, after: 3, opens: true, joined: [['Defaulted', 1n], ['Defaulted', 2n]] });
    // The write's second event is not its first: a rule firing once a write can tell.
    const [, defaulted] = await log.readStream('thing-1');
    expect((await h.around(defaulted, counter)).write).toEqual({ joined: [], opens: false });
  });
});

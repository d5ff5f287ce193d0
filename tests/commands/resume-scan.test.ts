import { describe, expect, it } from 'vitest';
import { earlierAppend } from '../../commands/resume.js';
import type { WriteContext } from '../../commands/context.js';
import type { Position, RecordedEvent } from '../../domain/shared/events.js';
import type { EventLog } from '../../eventlog/port.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
const event = (n: number, stream: string, ref?: string): RecordedEvent =>
  ({ type: 'X', data: {}, stream, revision: 0n, position: at(n), metadata: { team: 1, source: 'Public API', keyName: null, correlationId: 'c', at: '', ...(ref ? { idempotencyRef: ref } : {}) } }) as RecordedEvent;

/** A team's events, read as the log's readTeam pages them; counts the events handed out. */
function teamLog(events: RecordedEvent[]) {
  let read = 0;
  const log = {
    readTeam: async (_team: number, from: Position | null, limit: number) => {
      const page = events.filter((e) => from === null || e.position.commit > from.commit).slice(0, limit);
      read += page.length;
      return page;
    },
  } as unknown as EventLog;
  return { log, read: () => read };
}

const ctx = (from: number | null, to: number | null): WriteContext =>
  ({ team: 1, idem: { ref: 'r', earlier: { from: from === null ? null : at(from), to: to === null ? null : at(to) } } }) as WriteContext;

describe("a takeover's scan for the earlier try's appends (commands/resume.ts)", () => {
  it('reads the team from the mark up to the head of the takeover, not the appends after it', async () => {
    const events = [event(1, 'a-1'), event(2, 'a-2', 'r'), event(3, 'a-3')];
    // Past the takeover's head, the team's other writers go on (an event with the ref there is not the earlier try's).
    for (let n = 4; n < 2600; n++) events.push(event(n, `b-${n}`, n === 2500 ? 'r' : undefined));
    const { log, read } = teamLog(events);
    expect((await earlierAppend(log, ctx(1, 3), 'a-2'))?.map((e) => e.position.commit)).toEqual([2n]);
    expect(await earlierAppend(log, ctx(1, 3), 'b-2500')).toBeUndefined();
    expect(read()).toBeLessThanOrEqual(2 * 1000);
  });

  it('reads the log itself where the team read trails the appends (EventStoreDB links), so a just-appended earlier try is found', async () => {
    const events = [event(1, 'a-1'), event(2, 'a-2', 'r'), event(3, 'a-3')];
    const asked: Array<[Position | null, Position]> = [];
    const log = {
      // The team's links stop before the earlier try's append: read through them, it would be written again.
      readTeam: async (_team: number, from: Position | null, limit: number) => events.slice(0, 1).filter((e) => from === null || e.position.commit > from.commit).slice(0, limit),
      readTeamUpTo: async (_team: number, from: Position | null, to: Position, limit: number) => {
        asked.push([from, to]);
        return events.filter((e) => (from === null || e.position.commit > from.commit) && e.position.commit <= to.commit).slice(0, limit);
      },
    } as unknown as EventLog;
    expect((await earlierAppend(log, ctx(1, 3), 'a-2'))?.map((e) => e.position.commit)).toEqual([2n]);
    expect(asked).toEqual([[at(1), at(3)]]);
  });

  it('finds nothing when the log was empty at the takeover', async () => {
    const { log, read } = teamLog([event(1, 'a-1', 'r')]);
    expect(await earlierAppend(log, ctx(null, null), 'a-1')).toBeUndefined();
    expect(read()).toBe(0);
  });
});

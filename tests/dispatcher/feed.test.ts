import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { ChangeFeed } from '../../dispatcher/feed.js';
import { START } from '../../dispatcher/feed-cursor.js';
import type { EventLog } from '../../eventlog/port.js';

const created: RecordedEvent = {
  type: 'ConstituentCreated',
  data: { id: 1, fields: { FirstName: 'Ada', LastName: 'Byron' } },
  stream: 'constituent-1',
  revision: 0n,
  position: { commit: 5n, prepare: 5n },
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2026-01-01T00:00:00.000Z' },
};

/** A log whose team index shows an event only when `indexed` says so (EventStoreDB's projection lags the append). */
function laggingLog() {
  let handler: ((e: RecordedEvent) => void) | null = null;
  const state = { indexed: false };
  const log = {
    head: async () => null,
    subscribe: (_from: unknown, h: (e: RecordedEvent) => void) => {
      handler = h;
      return { stop: async () => undefined };
    },
    readTeam: async () => (state.indexed ? [created] : []),
    readStream: async () => [created],
    readStreamUntil: async () => [created],
  } as unknown as EventLog;
  return { log, state, write: () => handler?.(created) };
}

describe('a long-polling reader of the change feed', () => {
  it('looks again shortly after a wake that found nothing yet, instead of waiting out `wait`', async () => {
    const { log, state, write } = laggingLog();
    const feed = new ChangeFeed(log);
    const started = Date.now();
    // A wait of 30 s, so that answering within 10 s on however busy a machine still says it looked again.
    const answer = feed.wait(1, { after: START, types: null, limit: 10 }, 30_000);
    await new Promise((r) => setTimeout(r, 20));
    write(); // woken, but the team's index does not show it yet
    await new Promise((r) => setTimeout(r, 30));
    state.indexed = true;
    const page = await answer;
    expect(page.changes.map((e) => JSON.parse(e).type)).toEqual(['constituent.created']);
    expect(Date.now() - started).toBeLessThan(10_000);
    await feed.close();
  }, 60_000);
});

describe('a page of the change feed built from the log', () => {
  it('reads the events it lists and one more, not a whole batch past a full page', async () => {
    const events = Array.from({ length: 3000 }, (_, i): RecordedEvent => ({
      ...created,
      data: { id: i + 1, fields: { FirstName: `N${i + 1}` } },
      stream: `constituent-${i + 1}`,
      position: { commit: BigInt(i + 1), prepare: BigInt(i + 1) },
    }));
    let read = 0;
    const log = {
      head: async () => events[events.length - 1].position,
      subscribe: () => ({ stop: async () => undefined }),
      readTeam: async (_team: number, from: RecordedEvent['position'] | null, limit: number) => {
        const start = from ? Number(from.commit) : 0;
        const out = events.slice(start, start + limit);
        read += out.length;
        return out;
      },
      readStream: async () => [],
    } as unknown as EventLog;
    const feed = new ChangeFeed(log);
    const first = await feed.page(1, { after: START, types: null, limit: 1000 });
    expect(first.changes).toHaveLength(1000);
    expect(first.hasMore).toBe(true);
    expect(read).toBe(1001);
    const second = await feed.page(1, { after: first.next, types: null, limit: 1000 });
    expect(JSON.parse(second.changes[0]).data.FirstName).toBe('N1001');
    expect(read).toBe(2002);
    await feed.close();
  });
});

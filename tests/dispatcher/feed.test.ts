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

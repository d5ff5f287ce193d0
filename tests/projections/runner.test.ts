import type { Category } from '../../domain/events.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ANY, type NewEvent } from '../../eventlog/port.js';
import { type RecordedEvent } from '../../domain/shared/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { projectors } from '../../projections/index.js';
import { ProjectionRunner, type Projector } from '../../projections/runner.js';
import { MemoryReadStore } from '../../projections/store/memory.js';

const event = (type: string): NewEvent => ({
  type,
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

const closing: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closing.splice(0)) await c();
});

/** A projector that records the streams it was given. */
function recorder(name: string, categories?: Category[]): Projector & { seen: string[] } {
  const seen: string[] = [];
  return { name, collections: [], categories, seen, apply: async (e: RecordedEvent) => void seen.push(e.stream) };
}

describe('the projection runner', () => {
  it('gives a projector only the events of the stream categories it reads, and every event to one that names none', async () => {
    const log = new SqliteEventLog(':memory:');
    const constituents = recorder('constituents', ['constituent']);
    const following = recorder('tasks', ['volunteer_task', 'constituent']);
    const everything = recorder('everything');
    const runner = new ProjectionRunner(log, new MemoryReadStore(), [constituents, following, everything]);
    closing.push(async () => {
      await runner.stop();
      await log.close();
    });
    await runner.start();
    // `constituent_email-…` is a category of its own, not `constituent`: a claim stream is not a record.
    const streams = ['constituent-1', 'volunteer_task-2', 'constituent_email-1-abc', 'ids-constituent', 'constituent-3', 'team'];
    let last = null;
    for (const s of streams) last = (await log.append(s, [event('Something')], ANY)).position;
    await runner.waitFor(last!);

    expect(constituents.seen).toEqual(['constituent-1', 'constituent-3']);
    expect(following.seen).toEqual(['constituent-1', 'volunteer_task-2', 'constituent-3']);
    expect(everything.seen).toEqual(streams);
  });

  it('routes every event the read models are built from: each category written by the domain reaches its projector', () => {
    // The categories the product's projectors read, against the stream names the domain writes.
    const read = new Set(projectors.flatMap((p) => p.categories ?? []));
    for (const category of ['team', 'constituent', 'lookup', 'donation', 'recurring_gift', 'webhook_endpoint', 'event', 'event_ticket', 'volunteer', 'volunteer_task_group', 'volunteer_task', 'notification'])
      expect(read, category).toContain(category);
  });
});

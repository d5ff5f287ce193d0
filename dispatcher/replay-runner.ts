import { subscribes } from '../domain/webhook-endpoint/types.js';
import { endpointEvolver, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import { load } from '../eventlog/load.js';
import type { EventLog } from '../eventlog/port.js';
import type { DeliveryLog } from './deliveries.js';
import { ChangeFeed, type FeedPages } from './feed.js';
import { decodeCursor, encodeCursor } from './feed-cursor.js';
import { parseBound, rangeQuery } from './feed-range.js';
import type { DeliveryQueue, DeliveryTask } from './queue/port.js';
import type { Replay, ReplayStore } from './replays.js';
import { pendingDelivery } from './worker.js';

export interface ReplayRunnerDeps {
  log: EventLog;
  queue: DeliveryQueue;
  deliveries: DeliveryLog;
  replays: ReplayStore;
  /**
   * The change feed's read model where there is one (the embedded table, the read store's
   * collection): a replay reads its pages there, as GET /changes does, and opens no sealed event.
   */
  feed?: FeedPages;
  report?: (message: string) => void;
  /** A replay's tasks queued and not yet finished, at most (default 1,000). */
  window?: number;
  /** Envelopes read and queued in one step, at most (default 250). */
  batch?: number;
}

/** How often the store is asked for new jobs, and how long a job with a full window waits to look again. */
const POLL_MS = 200;
const WINDOW_WAIT_MS = 10;

/**
 * Runs replays (decisions.md §12) in the process that follows the log. A job reads the team's
 * envelopes in log order through the change feed, keeps those the endpoint subscribes to now
 * (whenever they were written: before the endpoint existed or while it was disabled), and queues
 * them in bounded batches, only while fewer than `window` of its tasks are outstanding. So a
 * replay of a million events holds at most a window of queue space (JetStream's pending limits
 * are never reached), and a live task never has more than a window of replay tasks ahead of it
 * (the embedded queue serves live tasks first besides). Progress is saved after each batch.
 */
export class ReplayRunner {
  private readonly feed: ChangeFeed;
  private readonly active = new Map<string, Promise<void>>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly window: number;
  private readonly batch: number;

  constructor(private readonly deps: ReplayRunnerDeps) {
    this.feed = new ChangeFeed(deps.log, deps.feed ?? null);
    this.window = deps.window ?? 1000;
    this.batch = deps.batch ?? 250;
  }

  start(): void {
    const look = async () => {
      this.timer = null;
      try {
        for (const r of await this.deps.replays.running()) if (!this.active.has(r.id) && !this.stopped) this.begin(r);
      } catch (err) {
        this.deps.report?.(`webhook replays: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (!this.stopped) this.timer = setTimeout(look, POLL_MS);
    };
    void look();
  }

  private begin(r: Replay): void {
    const p = this.run(r)
      .catch(async (err) => {
        const error = err instanceof Error ? err.message : String(err);
        this.deps.report?.(`webhook replay ${r.id}: ${error}`);
        await this.deps.replays.save({ id: r.id, status: 'failed', queued: r.queued, next: r.next, exhausted: r.exhausted, error }).catch(() => undefined);
      })
      .finally(() => this.active.delete(r.id));
    this.active.set(r.id, p);
  }

  private async run(job: Replay): Promise<void> {
    const { log, queue, deliveries, replays } = this.deps;
    const range = rangeQuery(parseBound(job.from, 'from'), job.to === null ? undefined : parseBound(job.to, 'to'), job.types ?? undefined);
    let { queued, next, exhausted } = job;
    const save = (status: Replay['status'], error: string | null = null) => replays.save({ id: job.id, status, queued, next, exhausted, error });
    while (!this.stopped) {
      const current = await replays.get(job.id);
      if (!current || current.status !== 'running') return;
      const outstanding = queued - current.sent - current.failed;
      if (exhausted) {
        if (outstanding <= 0) return save('done');
        await sleep(POLL_MS);
        continue;
      }
      const room = this.window - outstanding;
      if (room < Math.min(this.batch, this.window / 4)) {
        await sleep(WINDOW_WAIT_MS);
        continue;
      }
      // The endpoint as it is now decides what it gets: its subscriptions, and whether it still exists.
      const { state: ep } = await load(log, webhookEndpointStream(job.endpointId), endpointEvolver);
      if (!ep.exists || ep.deleted || ep.team !== job.team) return save('failed', 'the webhook endpoint was deleted');
      const wanted = (type: string) => subscribes(ep.events, type) && (!range.types || range.types(type));
      const page = await this.feed.page(job.team, { ...range, after: decodeCursor(next, 'from'), types: wanted, limit: Math.min(room, this.batch) });
      const tasks: DeliveryTask[] = page.changes.map((json) => {
        const envelope = JSON.parse(json) as { id: string; type: string };
        return {
          // Its own id per replay: never the live chain's, nor another replay's.
          id: `${envelope.id}.${job.endpointId}.${job.id}`,
          endpointId: job.endpointId,
          team: job.team,
          eventId: envelope.id,
          eventType: envelope.type,
          // The feed's JSON as it is: byte for byte what the live delivery sent.
          body: json,
          replay: job.id,
        };
      });
      const at = new Date().toISOString();
      await deliveries.recordPending(tasks.map((t) => pendingDelivery(t, 1, at)));
      await queue.add(tasks);
      queued += tasks.length;
      next = encodeCursor(page.next);
      exhausted = !page.hasMore;
      await save('running');
    }
  }

  /** Stops queueing; a job still running resumes from its saved cursor in whichever process runs replays next. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all(this.active.values());
    await this.feed.close();
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

import { fromLog, inCategory, streamIdOf } from '../domain/events.js';
import { Backoff } from '../eventlog/backoff.js';
import { type FollowerStatus, LogFollower } from '../eventlog/follower.js';
import type { EventLog } from '../eventlog/port.js';
import type { Position, RecordedEvent } from '../domain/shared/events.js';
import { endpointEvolver, type EndpointState, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import { subscribes } from '../domain/webhook-endpoint/types.js';
import { WEBHOOK_ENDPOINTS } from '../projections/webhook-endpoints.js';
import type { ReadStore } from '../projections/store/port.js';
import { canReceive, categoryOf, mayFire } from './catalog.js';
import { envelopesOf } from './envelope.js';
import type { Delivery, DeliveryLog } from './deliveries.js';
import { AsOf } from './history.js';
import { type DeliveryQueue, type DeliveryTask, liveTaskId } from './queue/port.js';
import { pendingDelivery } from './worker.js';

export interface DispatcherDeps {
  log: EventLog;
  store: ReadStore;
  queue: DeliveryQueue;
  deliveries: DeliveryLog;
  /** Resolves once the read models include a position (to list endpoints at start). */
  settle: (position: Position | null) => Promise<void>;
  onError?: (err: unknown) => void;
  /** Where resubscriptions are told (a logger). */
  report?: (message: string) => void;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

const FLUSH_RETRY = { initialMs: 250, maxMs: 10_000 };

/**
 * Follows the log from its own checkpoint (never called from a route) and turns each domain
 * event into one queued task per (webhook type, subscribed endpoint of the event's team).
 *
 * Endpoints are matched as of the event: the dispatcher folds endpoint events itself, in log
 * order, so an endpoint created later never receives earlier events and a deactivated one
 * stops at once. Task ids are deterministic, so a replay after a restart does not enqueue twice.
 */
export class Dispatcher {
  private readonly endpoints = new Map<number, EndpointState>();
  private follower: LogFollower | null = null;
  private tasks: DeliveryTask[] = [];
  private pending: Delivery[] = [];
  private last: Position | null = null;
  private flushing: Promise<void> | null = null;
  private flushScheduled = false;
  private lastCheckpointWrite = 0;
  /** A failed flush is tried again after this long (doubling, capped): its tasks wait here until the queue is back. */
  private readonly flushRetry = new Backoff(FLUSH_RETRY);
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: DispatcherDeps) {}

  async start(): Promise<void> {
    const { log, report, retryInitialMs, retryMaxMs } = this.deps;
    this.follower = new LogFollower({ name: 'webhook-dispatcher', log, resume: () => this.resume(), handle: (e) => this.handle(e), report, retryInitialMs, retryMaxMs });
    await this.follower.start();
  }

  /**
   * Where a (re)subscription starts: the queue's checkpoint, with the endpoints folded up to it.
   * What was buffered past it is dropped and replayed (task ids make a second enqueue harmless).
   */
  private async resume(): Promise<Position | null> {
    while (this.flushing) await this.flushing.catch(() => undefined);
    [this.tasks, this.pending, this.last] = [[], [], null];
    this.endpoints.clear();
    const from = await this.deps.queue.checkpoint();
    await this.loadEndpoints(from);
    return from;
  }

  /** The log follower's readiness (decisions.md §1). */
  status(): Promise<FollowerStatus> {
    return this.follower ? this.follower.status() : Promise.resolve({ name: 'webhook-dispatcher', state: 'catching_up', behind: null });
  }

  /** Every endpoint ever created, folded up to the checkpoint; later events come through the subscription. */
  private async loadEndpoints(from: Position | null): Promise<void> {
    if (!from) return;
    await this.deps.settle(await this.deps.log.head());
    const all = await this.deps.store.find<{ id: number }>({ collection: WEBHOOK_ENDPOINTS });
    for (const { id } of all.items) {
      const h = new AsOf(this.deps.log, from);
      const s = await h.state(webhookEndpointStream(id), endpointEvolver);
      if (s.exists) this.endpoints.set(id, s);
    }
  }

  private subscribed(team: number): EndpointState[] {
    const out: EndpointState[] = [];
    for (const ep of this.endpoints.values()) if (ep.team === team && ep.active && !ep.deleted) out.push(ep);
    return out;
  }

  private async handle(recorded: RecordedEvent): Promise<void> {
    const e = fromLog(recorded);
    if (inCategory(e, 'webhook_endpoint')) {
      const id = streamIdOf(e.stream);
      const state = endpointEvolver.evolve(this.endpoints.get(id) ?? endpointEvolver.initial(), e);
      if (state.deleted) this.endpoints.delete(id);
      else this.endpoints.set(id, state);
    } else if (mayFire(e)) {
      // Mapping reads streams: only for an event some endpoint of the team could receive.
      const category = categoryOf(e.stream);
      const candidates = this.subscribed(e.metadata.team).filter((ep) => canReceive(category, ep.events));
      if (candidates.length) {
        for (const envelope of await envelopesOf(e, new AsOf(this.deps.log, e.position))) {
          const targets = candidates.filter((ep) => subscribes(ep.events, envelope.type));
          if (!targets.length) continue;
          const body = JSON.stringify(envelope);
          for (const ep of targets) {
            const task: DeliveryTask = { id: liveTaskId(e.position.prepare, envelope.type, ep.id), endpointId: ep.id, team: ep.team, eventId: envelope.id, eventType: envelope.type, body };
            if (e.metadata.traceparent) task.traceparent = e.metadata.traceparent;
            this.tasks.push(task);
            this.pending.push(pendingDelivery(task, 1, new Date().toISOString()));
          }
        }
      }
    }
    // Only now, with its tasks buffered, may a flush move the checkpoint past this event.
    this.last = e.position;
    // Enqueue in batches: everything the log handed over in one turn shares one durable write.
    if (this.tasks.length >= 256) await this.flush();
    else this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush().catch((err) => this.deps.onError?.(err));
    });
  }

  private async flush(): Promise<void> {
    // Another flush's failure is its own to report (and retry): this one still runs.
    while (this.flushing) await this.flushing.catch(() => undefined);
    if (!this.last) return;
    // With nothing to enqueue the checkpoint may lag a little: replaying such events enqueues nothing.
    if (!this.tasks.length && Date.now() - this.lastCheckpointWrite < 1000) return;
    const tasks = this.tasks;
    const pending = this.pending;
    const at = this.last;
    this.tasks = [];
    this.pending = [];
    this.flushing = (async () => {
      // Embedded, both land in one transaction (one commit). Pending rows are inserted only where
      // none exists, atomically, so a worker's attempt recorded first is never overwritten.
      await Promise.all([this.deps.deliveries.recordPending(pending), this.deps.queue.enqueue(tasks, at)]);
      this.lastCheckpointWrite = Date.now();
    })();
    try {
      await this.flushing;
      this.flushRetry.reset();
    } catch (err) {
      // Nothing was enqueued: keep the tasks for the next flush (their ids make a partial write
      // harmless), and try again on a timer, since no further event may come to trigger one
      // (the queue's server was away while the last writes came in).
      this.tasks = [...tasks, ...this.tasks];
      this.pending = [...pending, ...this.pending];
      this.retryLater();
      throw err;
    } finally {
      this.flushing = null;
    }
  }

  private retryLater(): void {
    if (this.retryTimer || !this.follower) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.flush().catch((err) => this.deps.onError?.(err));
    }, this.flushRetry.next());
  }

  async stop(): Promise<void> {
    await this.follower?.stop();
    this.follower = null;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.lastCheckpointWrite = 0;
    await this.flush();
  }
}

import type { Position } from '../../domain/shared/events.js';

/**
 * The durable delivery queue: one task per (event, webhook type, endpoint), at least once.
 * Adapters: sqlite.ts (embedded, a table in the webhook database) and nats.ts (JetStream work queue).
 * They hold no business rules: the worker decides retries and abandonment.
 */
/**
 * A live task's id (the dispatcher's, as it follows the log): deterministic, so an event the
 * dispatcher reads again is not enqueued twice. A replay's and a resend's are of other forms.
 */
export const liveTaskId = (position: bigint, type: string, endpointId: number) => `${position}.${type}.${endpointId}`;

export interface DeliveryTask {
  /** Live: liveTaskId(event's prepare position, type, endpoint); a replay's or a resend's: their own, never one of those. */
  id: string;
  endpointId: number;
  team: number;
  /** The envelope id, the same on every attempt. */
  eventId: string;
  eventType: string;
  /** The envelope JSON, prepared once as of the event and sent byte for byte on every attempt. */
  body: string;
  /** The replay job that queued it (decisions.md §12); absent for live deliveries and resends. */
  replay?: string;
  /** The W3C traceparent of the write that caused it, when that write was traced (decisions.md §15). */
  traceparent?: string;
}

export interface Lease {
  task: DeliveryTask;
  /** This attempt's number, from 1. */
  attempt: number;
}

/**
 * What became of an attempt: finished (delivered or given up), try again after a delay, or (defer)
 * not attempted at all and due again after a delay with the same attempt number (a throttle).
 */
export type Outcome = { kind: 'done' } | { kind: 'retry'; delayMs: number } | { kind: 'defer'; delayMs: number };

/**
 * The handler's answer: the outcome and, where the handler left it in flight, the write of the
 * attempt's record. The queue finishes the task only once that write has succeeded: the embedded
 * queue commits both in one transaction (they share a group commit), others wait for it first.
 */
export type Handled = Outcome & {
  written?: Promise<void>;
  /**
   * A body built again since the task was queued (an erasure: DeliveryQueue.noteErasure): what a
   * retry or a deferral is queued with, so that the queue does not keep the old one.
   */
  body?: string;
};

export interface Consumer {
  /** Stops taking tasks; resolves once attempts in flight have finished. */
  stop(): Promise<void>;
}

export interface DeliveryQueue {
  /** The dispatcher's position in the log: every event up to it has been enqueued. */
  checkpoint(): Promise<Position | null>;
  /**
   * Enqueues tasks (an id already enqueued is ignored) and then records the checkpoint; where the
   * backend allows, as one atomic step.
   */
  enqueue(tasks: DeliveryTask[], checkpoint: Position): Promise<void>;
  /**
   * Enqueues tasks outside the log's order (a resend, a replay's batch) without moving the
   * checkpoint; an id already enqueued is ignored. Replay tasks wait behind live ones where the
   * backend can tell them apart.
   */
  add(tasks: DeliveryTask[]): Promise<void>;
  /** Hands due tasks to the handler, at most `concurrency` at once, until stopped. */
  consume(handler: (lease: Lease) => Promise<Handled>, options: { concurrency: number }): Consumer;
  /** Tasks in the queue, due now or waiting for a retry (turnout_webhook_queue_depth, decisions.md §15). */
  depth(): Promise<number>;
  /** False while a remote queue's server is out of reach (readiness: degraded, decisions.md §1); absent where it cannot be. */
  reachable?(): boolean;
  /**
   * decisions.md §17, where a queued task's body cannot be rewritten in place (NATS JetStream): an
   * erasure records the log position of its event for the team (the highest is kept), and the
   * worker builds again, from the log as the erasure left it, the body of any of the team's tasks
   * built as of an earlier event before it sends it (dispatcher/worker.ts). Absent where the
   * erasure rewrites the queued bodies themselves (the embedded queue: dispatcher/erasure.ts).
   */
  noteErasure?(team: number, position: bigint): Promise<void>;
  /** The highest position noteErasure recorded for the team; null for none. */
  erasedThrough?(team: number): Promise<bigint | null>;
  close(): Promise<void>;
}

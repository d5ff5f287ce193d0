/**
 * The event types every layer shares. Domain events are what deciders return and evolvers fold;
 * recorded events are the same events as the log hands them back, with where and when they were
 * written. Positions are modelled on EventStoreDB's `$all` positions ({commit, prepare} pairs), so
 * its adapter maps one to one.
 */

/** A domain event: a type name and its data, as a decider returns it. */
export interface DomainEvent<T extends string = string, D = Record<string, unknown>> {
  type: T;
  data: D;
}

/**
 * An event as an evolver folds it: recorded events carry their metadata, events a decision has
 * just returned (not yet written) do not.
 */
export type Folded<E extends DomainEvent = DomainEvent> = E & { metadata?: { team: number; at: string } };

/**
 * A pure aggregate: fold its events into state (domain/<aggregate>/events.ts). `evolve` is a
 * method on purpose: a stream holds only its own aggregate's events, so an evolver of one
 * aggregate's union folds any stream the log hands it (load, the dispatcher's history).
 */
export interface Evolver<S, E extends DomainEvent = DomainEvent> {
  initial: () => S;
  evolve(state: S, event: Folded<E>): S;
}

/** Who wrote an event: the public API (with the key's name) or the application. */
export type Source = 'Public API' | 'Application';

export interface EventMetadata {
  team: number;
  source: Source;
  /** The API key's name for Public API writes; null for the application. */
  keyName: string | null;
  correlationId: string;
  /** ISO date-time with Z, when the change was decided. */
  at: string;
  /** The W3C traceparent of the write, when it was traced (decisions.md §15); absent otherwise. */
  traceparent?: string;
  /**
   * The record's revision after the write that stored this event (decisions.md §7: writes from 1,
   * one per append), stamped by commands/aggregate.ts handle(); absent on events of other streams
   * (ids, claims, notifications) and on those written before it was stamped (domain/shared/revision.ts).
   */
  revision?: number;
  /**
   * `<batch ref>#<item index>` on every event an item of a batch write with an Idempotency-Key
   * stored (decisions.md §14), so a retry finds the items that committed and writes them no
   * second time (commands/batch.ts); absent on every other write.
   */
  batchItem?: string;
  /**
   * On every event of a single /api/v1 write with an Idempotency-Key: the key's ref, so a retry
   * that takes over the key after the earlier try died or failed past its commit finds what it
   * wrote and answers from it (commands/resume.ts); absent on every other write.
   */
  idempotencyRef?: string;
}

/** A place in the whole log. */
export interface Position {
  commit: bigint;
  prepare: bigint;
}

/** An event as the log stores it: the domain event, its stream and revision there, its position and metadata. */
export type RecordedEvent<E extends DomainEvent = DomainEvent> = E & {
  stream: string;
  /** The event's revision in its stream, from 0. */
  revision: bigint;
  position: Position;
  metadata: EventMetadata;
};

export const comparePositions = (a: Position, b: Position): number =>
  a.commit < b.commit ? -1 : a.commit > b.commit ? 1 : a.prepare < b.prepare ? -1 : a.prepare > b.prepare ? 1 : 0;

export const positionToString = (p: Position) => `${p.commit}/${p.prepare}`;
export function positionFromString(s: string): Position {
  const [c, p] = s.split('/');
  return { commit: BigInt(c), prepare: BigInt(p ?? c) };
}

/**
 * The default of an exhaustive switch over an event union: an event type added to the union and
 * forgotten in the switch fails to compile; at run time an unknown type changes nothing. Given the
 * event (narrowed to never), or for a one-event aggregate its type (narrowed to never).
 */
export const unknownEvent = <T>(_event: never, unchanged: T): T => unchanged;

import type { Position } from '../domain/shared/events.js';

/**
 * An event's place in the log as text that sorts as the log does: its commit position, then its
 * prepare position (events of one EventStoreDB append share a commit), each zero-padded to the
 * 20 digits of a 64-bit position. Stored in a document, it orders the document among the events
 * that act on it (projections/outbox.ts).
 */
const digits = (n: bigint) => n.toString().padStart(20, '0');

export const logOrder = (p: Position): string => `${digits(p.commit)}.${digits(p.prepare)}`;

/** The greatest key below the event at `p`'s: (commit, prepare - 1), or past every prepare of the commit before. */
export const logOrderBefore = (p: Position): string => (p.prepare > 0n ? logOrder({ commit: p.commit, prepare: p.prepare - 1n }) : `${digits(p.commit - 1n)}.~`);

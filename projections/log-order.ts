import type { Position } from '../domain/shared/events.js';

/**
 * An event's place in the log as text that sorts as the log does: its commit position, then its
 * prepare position (events of one EventStoreDB append share a commit), each zero-padded to the
 * 20 digits of a 64-bit position. Stored in a document, it orders the document among the events
 * that act on it (projections/outbox.ts).
 */
export const logOrder = (p: Position): string => `${p.commit.toString().padStart(20, '0')}.${p.prepare.toString().padStart(20, '0')}`;

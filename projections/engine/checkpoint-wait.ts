import { comparePositions, type Position } from '../../domain/shared/events.js';
import type { ReadStore } from '../store/port.js';
import { NotYetReadable } from './status.js';

/**
 * Read-your-writes for an API process that does not project: the shared read store's checkpoint
 * is written by the projector process; wait until it passes the write's position.
 */
export async function waitForCheckpoint(store: ReadStore, position: Position, name = 'read-models', timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 2;
  while (Date.now() < deadline) {
    const cp = await store.getCheckpoint(name);
    if (cp && comparePositions(position, cp) <= 0) return;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 50);
  }
  throw new NotYetReadable(position, timeoutMs);
}

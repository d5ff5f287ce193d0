import type { RecordedEvent } from '../domain/shared/events.js';

/** The events that change which API keys are valid, or what a key's record says. */
const API_KEY_EVENTS: ReadonlySet<string> = new Set(['ApiKeyIssued', 'ApiKeyRevoked']);

export const touchesApiKeys = (events: readonly RecordedEvent[]): boolean => events.some((e) => API_KEY_EVENTS.has(e.type));

/**
 * A counter shared by every thread of the process (a SharedArrayBuffer), bumped by whichever
 * thread applied an API-key event to the read models once that transaction has committed, and
 * read by the main thread on every request (commands/teams.ts verifyApiKey): an atomic load of a
 * few nanoseconds instead of a read of the key's record. Bumped after the commit and before the
 * thread tells the position it reached, so a revocation whose admin call has answered (it
 * settled to that position) has bumped it before the next request looks.
 *
 * Exact only where this process's threads are the only writers of its read models: the wiring
 * leaves it out where other processes share them (runtime/wiring.ts).
 */
export class ApiKeyMark {
  private readonly cell: Int32Array;

  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer, 0, 1);
  }

  bump(): void {
    Atomics.add(this.cell, 0, 1);
  }

  read(): number {
    return Atomics.load(this.cell, 0);
  }
}

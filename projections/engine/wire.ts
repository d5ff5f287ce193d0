/** What the main thread (thread.ts) and the read-model projector thread (thread-loop.ts) tell each other. */
import type { MessagePort } from 'node:worker_threads';

export interface ThreadSettings {
  /** The log's file, read on a connection of the thread's own. */
  logFile: string;
  /** The read database, written by the thread alone in this process. */
  readFile: string;
  /** How often the thread looks for another process's appends (this process's wake it at once). */
  pollMs: number;
  progressEveryMs: number;
  retryInitialMs: number;
  retryMaxMs: number;
  /** A module exporting `projectors` to run instead of the product's (tests only). */
  projectorsModule?: string;
  /** The process's API-key mark (api-key-mark.ts), where it keeps one. */
  keyMark?: SharedArrayBuffer;
}

/** `commits`: the port on which the log's writer thread tells each commit (EventLog.tellCommits), transferred. */
export type ToThread = { type: 'wake' } | { type: 'stop' } | { type: 'commits'; port: MessagePort };

/** Positions travel as decimal text: a bigint does not survive every structured clone the same way. */
export type FromThread =
  | { type: 'ready'; position: string; head: string; rebuilt: string[] }
  | { type: 'position'; position: string; caughtUp: boolean }
  | { type: 'progress'; done: number; total: number; rate: number; etaSeconds: number | null }
  | { type: 'failed'; message: string; retryInMs: number }
  | { type: 'recovered' }
  | { type: 'stopped' };

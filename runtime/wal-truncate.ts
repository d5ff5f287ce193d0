import { answerOnExit, startModuleThread } from './thread-projectors.js';

export interface WalTruncateSettings {
  file: string;
  busyTimeoutMs: number;
}
export type FromWalTruncate = { done: true } | { error: string };

/**
 * Empties a SQLite file's WAL (truncateWal: every frame copied into the file, the WAL cut to
 * nothing) on a short-lived thread of its own: after an erasure's search merge the read models'
 * WAL holds the rewritten index, and copying it held the main thread for 60-320 ms at a million
 * records. Answers once the thread has exited, its connection closed.
 */
export function truncateWalOffThread(file: string, busyTimeoutMs = 10_000): Promise<void> {
  const worker = startModuleThread(import.meta.url, 'wal-truncate-thread', { workerData: { file, busyTimeoutMs } satisfies WalTruncateSettings, name: 'turnout-wal-truncate' });
  return answerOnExit<{ done: true }>(worker, `emptying the WAL of ${file}`).then(() => undefined);
}

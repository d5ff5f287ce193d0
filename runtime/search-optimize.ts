import { answerOnExit, startModuleThread } from './thread-projectors.js';

export interface OptimizeSettings {
  file: string;
  busyTimeoutMs: number;
}
export type FromOptimizer = { tables: string[] } | { error: string };

/**
 * Merges every search index of a read-model file whole (optimizeSearchTables) on a short-lived
 * thread of its own: at a million rows the merge takes seconds of CPU, which on the main thread
 * would stop every request meanwhile. Its connection waits up to `busyTimeoutMs` for a
 * transaction of the projector thread to end. Answers the FTS5 tables merged.
 */
export function optimizeSearchOffThread(file: string, busyTimeoutMs = 30_000): Promise<string[]> {
  const worker = startModuleThread(import.meta.url, 'search-optimize-thread', { workerData: { file, busyTimeoutMs } satisfies OptimizeSettings, name: 'turnout-search-optimize' });
  // Answered once it has exited: its connection is closed, so the WAL can be emptied after.
  return answerOnExit<{ tables: string[] }>(worker, "the search index's merge").then((a) => a.tables);
}

import type { FeedRewritePlan } from '../dispatcher/feed-rewrite.js';
import { answerOnExit, startModuleThread } from './thread-projectors.js';

export interface FeedScanSettings {
  /** The read models' file (its change-feed table) and the log's, both opened read-only. */
  readModelsFile: string;
  logFile: string;
  team: number;
  after: bigint;
  /** The erased person's values and its events' positions (dispatcher/erasure.ts staleEnvelope). */
  values: string[];
  positions: bigint[];
}
export type FromFeedScan = { plan: FeedRewritePlan } | { error: string };

/**
 * An erasure's plan for the embedded change-feed table (dispatcher/feed-rewrite.ts), made on a
 * short-lived thread of its own: at a million records the walk inflates every block of the team
 * and tests every envelope's text, seconds of CPU that on the main thread stopped every request
 * of every team meanwhile. The thread answers only the rows and blocks to write, already built
 * and packed; the main thread writes them (FeedTable.rewriteBy).
 */
export function planFeedRewriteOffThread(settings: FeedScanSettings): Promise<FeedRewritePlan> {
  const worker = startModuleThread(import.meta.url, 'feed-scan-thread', { workerData: settings, name: 'turnout-feed-scan' });
  return answerOnExit<{ plan: FeedRewritePlan }>(worker, "the change feed's scan for an erasure").then((a) => a.plan);
}

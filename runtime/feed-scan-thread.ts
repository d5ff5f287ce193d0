/*
 * The change feed's scan for an erasure (feed-scan.ts): read-only connections to the read models'
 * file and the log's, one plan, then it exits.
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { envelopeRebuilderAt, staleEnvelope } from '../dispatcher/erasure.js';
import { planFeedTableRewrite } from '../dispatcher/feed-table.js';
import { openLogReader } from '../eventlog/sqlite-file.js';
import type { FeedScanSettings, FromFeedScan } from './feed-scan.js';

if (!parentPort) throw new Error('feed-scan-thread runs as a worker thread (feed-scan.ts)');
const s = workerData as FeedScanSettings;

async function scan(): Promise<FromFeedScan> {
  // The erasure tests' hook: a scan that fails, as one meeting an unreadable file would.
  if (process.env.TURNOUT_TEST_FEED_SCAN_FAIL) throw new Error('failed on purpose (TURNOUT_TEST_FEED_SCAN_FAIL)');
  const db = new Database(s.readModelsFile, { fileMustExist: true, readonly: true });
  const log = openLogReader(s.logFile, { readonly: true });
  try {
    db.pragma('busy_timeout = 10000');
    const eventAt = async (position: bigint) => {
      const [e] = log.readAfter(position - 1n, 1);
      return e && e.metadata.team === s.team ? e : undefined;
    };
    const stale = staleEnvelope(s.values, s.positions);
    return { plan: await planFeedTableRewrite(db, s.team, s.after, stale, envelopeRebuilderAt(eventAt, log)) };
  } finally {
    log.close();
    db.close();
  }
}

scan()
  .catch((err: unknown): FromFeedScan => ({ error: err instanceof Error ? err.message : String(err) }))
  .then((answer) => parentPort!.postMessage(answer));

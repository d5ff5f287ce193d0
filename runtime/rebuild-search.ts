/*
 * A thread of an offline rebuild (rebuild.ts): once the first thread's rows are all written, it
 * builds their search indexes in a file of its own while that thread builds the file's other
 * indexes, and the first thread then copies them in (SqliteReadCore.adoptSearchIndexes).
 */
import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import { buildSearchIndexApart } from '../projections/store/sqlite-layout.js';
import type { FromSearchApart, SearchApartSettings } from './rebuild.js';
import { Timeline, threadCpuMs } from './rebuild-timeline.js';

if (!parentPort) throw new Error('rebuild-search runs as a worker thread (rebuild.ts)');
const settings = workerData as SearchApartSettings;
const started = performance.now();
const timeline = new Timeline();
timeline.begin('start');
const post = (m: FromSearchApart) => parentPort!.postMessage(m);
// The first thread writes the file it reads meanwhile, one transaction at a time, with nothing
// else waiting on either: a wait for its lock ends, however long the machine takes.
const db = new Database(settings.file, { timeout: 600_000 });
try {
  // Written whole by this thread alone and deleted once copied: nothing to journal or sync.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  db.prepare('ATTACH DATABASE ? AS source').run(settings.from);
  // Every text read in one read transaction, short: the first thread commits its indexes after it.
  timeline.begin('copy text');
  db.transaction(() => {
    for (const s of settings.searches) buildSearchIndexApart(db, s, 'copy');
  })();
  db.exec('DETACH DATABASE source');
  timeline.begin('index');
  for (const s of settings.searches) buildSearchIndexApart(db, s, 'index');
  post({ type: 'done', cpuMs: threadCpuMs(), ms: performance.now() - started, timeline: timeline.done() });
} catch (err) {
  post({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
} finally {
  db.close();
}

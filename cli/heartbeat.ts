import { Worker } from 'node:worker_threads';

/**
 * A line on stderr every `everyMs` while the main thread is held by one long synchronous step
 * (decisions.md §13: a line at least every 5 s), such as a prepare's last step, which builds the
 * search and list indexes of a million rows in single SQLite statements. The lines come from a
 * thread of their own, written straight to file descriptor 2: a worker's `process.stderr` goes
 * through the main thread, which is exactly the thread that is busy.
 */
export function heartbeat(label: string, everyMs = 5_000): () => void {
  const worker = new Worker(
    `const { writeSync } = require('node:fs');
     const { workerData, parentPort } = require('node:worker_threads');
     const start = Date.now();
     const timer = setInterval(() => writeSync(2, workerData.label + ' (' + Math.round((Date.now() - start) / 1000) + ' s)\\n'), workerData.everyMs);
     parentPort.on('message', () => { clearInterval(timer); parentPort.close(); });`,
    // Its own flags: an --input-type=module of the parent would make this CommonJS text a module.
    { eval: true, execArgv: [], workerData: { label, everyMs } },
  );
  worker.unref();
  return () => {
    worker.postMessage('stop');
  };
}

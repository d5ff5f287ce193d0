import { seed } from './constituents.js';
import { measureReads } from './log-read.js';
import { measureAsOf, measureIdempotency, measureLongPoll } from './log-write.js';
import { startProduct } from './product.js';

/**
 * Issue 15's targets: the log as a product. `npm run bench -- log`. BENCH_LOG_N changes
 * (default 1,000,000: one constituent created each) are seeded straight into the log through
 * the commands' own decide and the log's append (constituents.ts seed), the read models catch
 * up, and then the feed and the export read them all over HTTP. The long-poll, asOf and
 * Idempotency-Key figures write through the API on the same server afterwards.
 * BENCH_PART picks one of feed (feed and export), longpoll, asof, idempotency.
 */
const PARTS = ['feed', 'longpoll', 'asof', 'idempotency'] as const;

export async function run(): Promise<{ name: string; lines: string[] }> {
  const n = Number(process.env.BENCH_LOG_N ?? 1_000_000);
  if (!Number.isInteger(n) || n < 1_000) throw new Error(`BENCH_LOG_N must be a whole number of at least 1,000 (got "${process.env.BENCH_LOG_N}")`);
  const part = process.env.BENCH_PART;
  if (part && !(PARTS as readonly string[]).includes(part)) throw new Error(`BENCH_PART for log is one of ${PARTS.join(', ')}`);
  const wants = (p: (typeof PARTS)[number]) => !part || part === p;
  const product = await startProduct();
  const lines: string[] = [];
  try {
    if (wants('feed')) {
      const seeded = await seed(product, n);
      lines.push(`${n.toLocaleString('en-US')} constituents seeded into the log and projected in ${(seeded.ms / 1000).toFixed(1)} s`);
      lines.push(...(await measureReads(product, n, n >= 200_000 ? 1 : 3)));
    }
    if (wants('longpoll')) lines.push(...(await measureLongPoll(product)));
    if (wants('asof')) lines.push(...(await measureAsOf(product)));
    if (wants('idempotency')) lines.push(...(await measureIdempotency(product)));
    return { name: `log (issue 15), ${n.toLocaleString('en-US')} changes`, lines };
  } finally {
    await product.close();
  }
}

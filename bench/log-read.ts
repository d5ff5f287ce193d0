import Fastify from 'fastify';
import { fork } from 'node:child_process';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { median } from './lib.js';
import type { ReaderResult, ReaderSpec } from './log-reader.js';
import type { Product } from './product.js';

const PAGE = 1_000;
const ADMIN = { authorization: 'Bearer bench-admin-token' };

/**
 * Runs one read (a whole feed or one export) in a reader process, sampling this process's RSS
 * meanwhile: the server's, as the reader's memory is its own.
 */
async function read(spec: ReaderSpec): Promise<ReaderResult & { rssGrowthMb: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    const result = await new Promise<ReaderResult>((resolve, reject) => {
      const reader = fork(fileURLToPath(new URL('./log-reader.js', import.meta.url)), [JSON.stringify(spec)], { stdio: 'inherit' });
      reader.once('message', (m: { ok?: ReaderResult; err?: string }) => (m.ok ? resolve(m.ok) : reject(new Error(m.err))));
      reader.once('error', reject);
      // After an answer this rejects nothing (the promise is settled); without one it says why.
      reader.once('close', (code) => reject(new Error(`the reader process exited ${code} without an answer`)));
    });
    return { ...result, rssGrowthMb: (peak - before) / 2 ** 20 };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * The baseline: a bare Fastify route serving the same envelopes (the feed's first page, parsed)
 * as pages of 1,000 and as NDJSON, with nothing behind them. What HTTP, JSON and this machine
 * allow, so the ratio shows what reading the log costs on top.
 */
async function startBaseline(sample: unknown[], total: number) {
  const app = Fastify({ logger: false });
  const pages = Math.ceil(total / PAGE);
  app.get<{ Querystring: { after?: string } }>('/page', async (request) => {
    const k = Number(request.query.after ?? 0) + 1;
    return { changes: sample.slice(0, k < pages ? PAGE : total - (pages - 1) * PAGE), next: String(k), hasMore: k < pages };
  });
  const lines = sample.map((e) => JSON.stringify(e) + '\n');
  app.get('/export', async (_request, reply) => {
    async function* chunks() {
      for (let sent = 0; sent < total; sent += PAGE) yield lines.slice(0, Math.min(PAGE, total - sent)).join('');
    }
    return reply.type('application/x-ndjson').send(Readable.from(chunks(), { objectMode: false, highWaterMark: 1 }));
  });
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { origin, close: () => app.close() };
}

const rate = (r: ReaderResult) => r.count / (r.ms / 1000);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Issue 15's two read targets: the whole feed in pages of 1,000, and the whole export, over HTTP. */
export async function measureReads(product: Product, total: number, rounds: number): Promise<string[]> {
  const first = await product.app.inject({ method: 'GET', url: `/api/v1/changes?limit=${PAGE}`, headers: { authorization: product.auth } });
  if (first.statusCode !== 200) throw new Error(`the feed's first page: ${first.statusCode} ${first.body}`);
  const sample = first.json().changes as unknown[];
  const baseline = await startBaseline(sample, total);
  try {
    const feed = { ours: [] as ReaderResult[], base: [] as ReaderResult[] };
    const exp = { ours: [] as Array<ReaderResult & { rssGrowthMb: number }>, base: [] as Array<ReaderResult & { rssGrowthMb: number }> };
    for (let r = 0; r < rounds; r++) {
      feed.base.push(await read({ mode: 'feed', origin: baseline.origin, path: '/page?x=1', headers: {} }));
      feed.ours.push(await read({ mode: 'feed', origin: product.origin, path: `/api/v1/changes?limit=${PAGE}`, headers: { authorization: product.auth } }));
      exp.base.push(await read({ mode: 'lines', origin: baseline.origin, path: '/export', headers: {} }));
      exp.ours.push(await read({ mode: 'lines', origin: product.origin, path: `/admin/v1/teams/${product.team}/export`, headers: ADMIN }));
    }
    for (const r of [...feed.ours, ...exp.ours]) if (r.count < total) throw new Error(`read ${r.count} changes of ${total}`);
    const feedRate = median(feed.ours.map(rate));
    const expRate = median(exp.ours.map(rate));
    const growth = Math.max(...exp.ours.map((r) => r.rssGrowthMb));
    const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
    return [
      `feed, GET /api/v1/changes?limit=${PAGE} from the start to the end, ${fmt(feed.ours[0].count)} changes in ${feed.ours[0].pages} pages, median of ${rounds}:`,
      `  bare route, same envelopes (baseline) ${fmt(median(feed.base.map(rate)))} changes/s`,
      `  Turnout                               ${fmt(feedRate)} changes/s  (${(feedRate / median(feed.base.map(rate))).toFixed(2)}x; rounds ${feed.ours.map((r) => fmt(rate(r))).join(', ')})`,
      `  target >= 50,000 changes/s: ${verdict(feedRate >= 50_000)}`,
      `export, GET /admin/v1/teams/:teamId/export (NDJSON), median of ${rounds}:`,
      `  bare route, same lines (baseline)     ${fmt(median(exp.base.map(rate)))} lines/s, RSS growth ${Math.max(...exp.base.map((r) => r.rssGrowthMb)).toFixed(0)} MB`,
      `  Turnout                               ${fmt(expRate)} lines/s, RSS growth ${growth.toFixed(0)} MB  (${(expRate / median(exp.base.map(rate))).toFixed(2)}x; rounds ${exp.ours.map((r) => fmt(rate(r))).join(', ')})`,
      `  target >= 50,000 lines/s: ${verdict(expRate >= 50_000)}; RSS growth < 50 MB: ${verdict(growth < 50)}`,
    ];
  } finally {
    await baseline.close();
  }
}

import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/**
 * The reading client of the log benchmarks (log-read.ts), a process of its own so that parsing
 * pages and counting lines runs neither on the server's event loop nor in its memory: the
 * export's RSS growth is then the server's alone (a reader thread's heap used to count in it).
 * `feed`: follows `next` from the start until `hasMore` is false. `lines`: reads one streamed
 * answer and counts its lines.
 */
export interface ReaderSpec {
  mode: 'feed' | 'lines';
  origin: string;
  /** The path; for `feed`, `&after=<cursor>` is added after the first page. */
  path: string;
  headers: Record<string, string>;
}

export interface ReaderResult {
  count: number;
  pages: number;
  ms: number;
}

async function get(pool: Pool, spec: ReaderSpec, path: string): Promise<string> {
  const res = await pool.request({ method: 'GET', path, headers: spec.headers });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text;
}

async function readFeed(pool: Pool, spec: ReaderSpec): Promise<ReaderResult> {
  let count = 0;
  let pages = 0;
  let after: string | null = null;
  const t0 = performance.now();
  for (;;) {
    const page = JSON.parse(await get(pool, spec, after ? `${spec.path}&after=${after}` : spec.path)) as { changes: unknown[]; next: string; hasMore: boolean };
    count += page.changes.length;
    pages++;
    after = page.next;
    if (!page.hasMore) return { count, pages, ms: performance.now() - t0 };
  }
}

async function readLines(pool: Pool, spec: ReaderSpec): Promise<ReaderResult> {
  const t0 = performance.now();
  const res = await pool.request({ method: 'GET', path: spec.path, headers: spec.headers });
  if (res.statusCode !== 200) throw new Error(`GET ${spec.path}: ${res.statusCode} ${(await res.body.text()).slice(0, 300)}`);
  let count = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) count++;
  }
  return { count, pages: 1, ms: performance.now() - t0 };
}

async function run(spec: ReaderSpec): Promise<ReaderResult> {
  const pool = new Pool(spec.origin, { connections: 1, keepAliveTimeout: 60_000, bodyTimeout: 0, headersTimeout: 0 });
  try {
    return spec.mode === 'feed' ? await readFeed(pool, spec) : await readLines(pool, spec);
  } finally {
    await pool.close();
  }
}

// Forked by log-read.ts with the spec as its one argument; the result goes back over IPC.
run(JSON.parse(process.argv[2]) as ReaderSpec).then(
  (r) => process.send!({ ok: r }, () => process.exit(0)),
  (err) => process.send!({ err: String(err) }, () => process.exit(1)),
);

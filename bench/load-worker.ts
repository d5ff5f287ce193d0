import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';
import type { LoadResult, LoadSpec } from './lib.js';

/**
 * The load generator's own thread, so that building requests and parsing answers does not run
 * on the server's event loop. A closed loop: `connections` requests are in flight at all times,
 * each loop sends its next request as soon as the previous answer has been read.
 */
async function run(spec: LoadSpec): Promise<LoadResult> {
  const pool = new Pool(spec.origin, { connections: spec.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  let seq = 0;
  let measuring = false;
  let stop = false;
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | null = null;

  const total = spec.total;
  const loop = async () => {
    while (!stop) {
      const n = seq++;
      if (total !== undefined && n >= total) break;
      const r = spec.requests[n % spec.requests.length];
      // `{{n}}` makes every body unique (emails, names) without shipping a million bodies here.
      const body = r.body === undefined ? undefined : r.body.replaceAll('{{n}}', String(n));
      const headers = r.templatedHeaders ? Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k, v.replaceAll('{{n}}', String(n))])) : r.headers;
      const t0 = performance.now();
      try {
        const res = await pool.request({ method: r.method, path: r.path, headers, body });
        const text = await res.body.text();
        const ms = performance.now() - t0;
        if (res.statusCode >= 300) {
          errors++;
          firstError ??= `${res.statusCode} ${text.slice(0, 200)}`;
        } else if (measuring) latencies.push(ms);
      } catch (err) {
        errors++;
        firstError ??= String(err);
      }
    }
  };

  const loops = Array.from({ length: spec.connections }, loop);
  if (total !== undefined) {
    measuring = true;
    const start = performance.now();
    await Promise.all(loops);
    await pool.close();
    return { latencies, elapsedMs: performance.now() - start, errors, firstError };
  }
  await new Promise((r) => setTimeout(r, spec.warmupMs));
  measuring = true;
  errors = 0;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, spec.durationMs));
  measuring = false;
  const elapsed = performance.now() - start;
  stop = true;
  await Promise.all(loops);
  await pool.close();
  return { latencies, elapsedMs: elapsed, errors, firstError };
}

run(workerData as LoadSpec).then(
  (r) => parentPort!.postMessage({ ok: r }),
  (err) => parentPort!.postMessage({ err: String(err) }),
);

import { Agent, request } from 'undici';
import { type BenchRequest, compare, formatComparison, load, paced, percentile, WARM_UP_MS } from './lib.js';
import { person } from './names.js';
import type { Product } from './product.js';

const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 500);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
const ms = (x: number) => `${x.toFixed(x < 10 ? 2 : 1)} ms`;
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

interface Phase {
  achieved: number;
  failures: number;
  /** Each write's 2xx to the page holding it (Infinity: never arrived), sorted. */
  delays: number[];
  /** Each write's own latency, send to 2xx, sorted. */
  own: number[];
}

/**
 * A write's 2xx to a waiting long-poll answering with it: one reader keeps a `wait=30` request
 * open (the next one sent as soon as a page comes), while constituents are created at a fixed
 * rate. The delay of each is from its 2xx to the page that holds it (0 when the page came
 * first). The baseline: the writes' own latency, send to 2xx, in the same run. A warm-up phase
 * at the same rate comes first; its figures are printed too, as a cold process's.
 */
export async function measureLongPoll(product: Product): Promise<string[]> {
  const warm = await longPollPhase(product, WARM_UP_MS, 0);
  const run = await longPollPhase(product, DURATION_MS, 1_000_000);
  const lost = (p: Phase) => p.delays.filter((d) => d === Infinity).length;
  const p99 = percentile(run.delays, 0.99);
  const line = (p: Phase) =>
    `p50 ${ms(percentile(p.delays, 0.5))}  p99 ${ms(percentile(p.delays, 0.99))}${p.failures ? `, ${p.failures} writes failed` : ''}${lost(p) ? `, ${lost(p)} changes never arrived` : ''}`;
  return [
    `long-poll: POST /api/v1/constituents at ${run.achieved.toFixed(0)} writes/s (target ${RATE}) for ${DURATION_MS / 1000} s after ${WARM_UP_MS / 1000} s of warm-up, one reader on GET /changes?wait=30:`,
    `  write, send to 2xx (baseline)         p50 ${ms(percentile(run.own, 0.5))}  p99 ${ms(percentile(run.own, 0.99))}`,
    `  2xx to the long-poll answering with it ${line(run)}`,
    `  the warm-up (a fresh process's first ${warm.own.length} writes): send to 2xx p99 ${ms(percentile(warm.own, 0.99))}; 2xx to the long-poll ${line(warm)}`,
    `  target p99 < 20 ms at ${RATE} writes/s: ${verdict(p99 < 20 && !lost(run) && run.achieved >= RATE * 0.95)}`,
  ];
}

/** One phase of the long-poll figure: `durationMs` of writes at RATE, named from `first` on. */
async function longPollPhase(product: Product, durationMs: number, first: number): Promise<Phase> {
  const dispatcher = new Agent({ connections: 256, keepAliveTimeout: 30_000, bodyTimeout: 0, headersTimeout: 0 });
  const auth = { authorization: product.auth };
  const now = await request(`${product.origin}/api/v1/changes?after=now&limit=1`, { headers: auth, dispatcher });
  let cursor = ((await now.body.json()) as { next: string }).next;
  const arrived = new Map<number, number>();
  let reading = true;
  const reader = (async () => {
    while (reading) {
      const r = await request(`${product.origin}/api/v1/changes?after=${cursor}&limit=1000&wait=30`, { headers: auth, dispatcher });
      const page = (await r.body.json()) as { changes: Array<{ data: { PkConstituent?: number } }>; next: string };
      const at = performance.now();
      for (const c of page.changes) if (c.data.PkConstituent !== undefined) arrived.set(c.data.PkConstituent, at);
      cursor = page.next;
    }
  })();
  const answered = new Map<number, { sent: number; at: number }>();
  let failures = 0;
  const { achieved } = await paced(RATE, durationMs, (i) => {
    const sent = performance.now();
    return request(`${product.origin}/api/v1/constituents`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ FirstName: 'Poll', LastName: `N${first + i}` }), dispatcher })
      .then(async (r) => {
        const body = (await r.body.json()) as { constituent?: { PkConstituent: number } };
        if (r.statusCode !== 201 || !body.constituent) failures++;
        else answered.set(body.constituent.PkConstituent, { sent, at: performance.now() });
      })
      .catch(() => void failures++);
  });
  const deadline = Date.now() + 30_000;
  while ([...answered.keys()].some((id) => !arrived.has(id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  reading = false;
  // The reader's last request ends with the next write or its wait: one more write releases it.
  await request(`${product.origin}/api/v1/constituents`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"LastName":"Last"}', dispatcher }).then((r) => r.body.dump());
  await reader;
  await dispatcher.close();
  const delays = [...answered].map(([id, w]) => Math.max(0, (arrived.get(id) ?? Infinity) - w.at)).sort((a, b) => a - b);
  const own = [...answered.values()].map((w) => w.at - w.sent).sort((a, b) => a - b);
  return { achieved, failures, delays, own };
}

/**
 * `?asOf=` of one constituent with 1,000 revisions (a creation and 999 PATCHes through the
 * API), at instants spread over its life, one request at a time. Baseline: the plain read of
 * the same record.
 */
export async function measureAsOf(product: Product, requests = 300): Promise<string[]> {
  const json = { authorization: product.auth, 'content-type': 'application/json' };
  const created = await product.app.inject({ method: 'POST', url: '/api/v1/constituents', headers: json, payload: person(7) });
  if (created.statusCode !== 201) throw new Error(`creating: ${created.statusCode} ${created.body}`);
  const id = created.json().constituent.PkConstituent as number;
  const instants: string[] = [];
  for (let i = 1; i < 1_000; i++) {
    const r = await product.app.inject({ method: 'PATCH', url: `/api/v1/constituents/${id}`, headers: json, payload: { Nickname: `Rev${i}` } });
    if (r.statusCode !== 200) throw new Error(`PATCH: ${r.statusCode} ${r.body}`);
    instants.push(new Date().toISOString());
  }
  const check = await product.app.inject({ method: 'GET', url: `/api/v1/constituents/${id}?revision=1000`, headers: json });
  if (check.statusCode !== 200) throw new Error(`the record has no revision 1000: ${check.statusCode} ${check.body}`);
  const spread = Array.from({ length: requests }, (_, k) => instants[Math.floor((k * 7919) % instants.length)]);
  const asOf: BenchRequest[] = spread.map((t) => ({ method: 'GET', path: `/api/v1/constituents/${id}?asOf=${encodeURIComponent(t)}`, headers: { authorization: product.auth } }));
  const plain: BenchRequest[] = [{ method: 'GET', path: `/api/v1/constituents/${id}`, headers: { authorization: product.auth } }];
  const one = (requests_: BenchRequest[]) => load({ origin: product.origin, connections: 1, warmupMs: 0, durationMs: 0, requests: requests_, total: requests });
  const base = await one(plain);
  const ours = await one(asOf);
  return [
    `asOf: GET /api/v1/constituents/{id}?asOf= of a record with 1,000 revisions, ${requests} instants over its life, one at a time:`,
    `  plain read of the record (baseline)   p50 ${ms(base.p50)}  p99 ${ms(base.p99)}`,
    `  ?asOf=                                p50 ${ms(ours.p50)}  p99 ${ms(ours.p99)}`,
    `  target p99 < 20 ms: ${verdict(ours.p99 < 20)}`,
  ];
}

/** POST with an Idempotency-Key (a new one per request) against the same POST without, alternating rounds. */
export async function measureIdempotency(product: Product): Promise<string[]> {
  const spec = { origin: product.origin, connections: 64, warmupMs: 1_000, durationMs: DURATION_MS };
  const json = { authorization: product.auth, 'content-type': 'application/json' };
  const bodies = Array.from({ length: 200 }, (_, i) => JSON.stringify(person(i, `i{{n}}`)));
  let round = 0;
  const without: BenchRequest[] = bodies.map((body) => ({ method: 'POST', path: '/api/v1/constituents', headers: json, body }));
  const keyed = (): BenchRequest[] => {
    round++;
    return bodies.map((body) => ({ method: 'POST', path: '/api/v1/constituents', headers: { ...json, 'idempotency-key': `bench-${round}-{{n}}` }, templatedHeaders: true, body }));
  };
  const c = await compare(
    3,
    () => load({ ...spec, requests: without }),
    () => load({ ...spec, requests: keyed() }),
  );
  return formatComparison(
    'idempotency: POST /api/v1/constituents, 64 connections, with a new Idempotency-Key each vs without',
    { baseline: 'POST without a key', subject: 'POST with Idempotency-Key' },
    c,
    [{ label: `throughput >= 80% of the baseline (${(c.ratio * 100).toFixed(0)}%)`, ok: c.ratio >= 0.8 }],
  );
}

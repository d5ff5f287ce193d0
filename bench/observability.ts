import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BenchRequest, type Comparison, compare, formatComparison, load, type Measure, median } from './lib.js';
import { person } from './names.js';
import { ADMIN, type Product, startProduct } from './product.js';

/**
 * Issue 33 point 6: what metrics and tracing cost a write. Four products side by side, the same
 * write load on each in alternated rounds (lib.ts compare), each figure beside its baseline:
 *   - metrics off, tracing off: the baseline;
 *   - metrics on (scraped every second, as a busy Prometheus would): at most 3% fewer writes;
 *   - tracing off against tracing off (a second, identical product): the noise of the machine,
 *     which is what "nothing measurable" is judged against (unset, no tracing hook is installed);
 *   - tracing on (every request sampled, spans sent over OTLP/HTTP to a sink here): at most 15%.
 * Throughput on a machine shared with other work swings by tens of percent from one round to the
 * next, so each side's CPU time per request is printed too (the process's CPU, load generator
 * included, over the round, divided by its requests): it hardly depends on what else runs.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_MS = 1_000;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3_000);
const CONNECTIONS = 64;

/** An OTLP/HTTP endpoint that takes every export and keeps nothing (a collector's cost is not ours). */
async function startSink(): Promise<{ url: string; exports: () => number; close(): Promise<void> }> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, exports: () => n, close: () => new Promise((r) => server.close(() => r())) };
}

/** Scrapes /metrics every second while it runs, as Prometheus would. */
function scraping(product: Product): () => void {
  const timer = setInterval(() => {
    void fetch(`${product.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.text(), () => undefined);
  }, 1_000);
  return () => clearInterval(timer);
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const sink = await startSink();
  const off = { metrics: false, env: {} };
  const baseline = await startProduct(off);
  const twin = await startProduct(off);
  const metered = await startProduct({ metrics: true, env: {} });
  // The exporter reads the standard variables from the process environment.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.url;
  const traceEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
  const traced = await startProduct({ metrics: false, env: traceEnv });
  const stopScraping = scraping(metered);
  try {
    const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify(person(i, '{{n}}')));
    const writes = (p: Product): BenchRequest[] =>
      bodies.map((body) => ({ method: 'POST', path: '/api/v1/constituents', headers: { 'content-type': 'application/json', authorization: p.auth }, body }));
    const spec = (p: Product) => ({ connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS, origin: p.origin, requests: writes(p) });
    const cpuPerRequest = { baseline: [] as number[], subject: [] as number[] };
    const timed = (p: Product, side: 'baseline' | 'subject') => async (): Promise<Measure> => {
      const [cpu0, t0] = [process.cpuUsage(), performance.now()];
      const m = await load(spec(p));
      const cpu = process.cpuUsage(cpu0);
      // CPU busy per wall second over the whole round, divided by requests per second.
      cpuPerRequest[side].push(((cpu.user + cpu.system) / ((performance.now() - t0) / 1000)) / m.rps);
      return m;
    };
    const against = async (subject: Product) => {
      cpuPerRequest.baseline = [];
      cpuPerRequest.subject = [];
      const c = await compare(ROUNDS, timed(baseline, 'baseline'), timed(subject, 'subject'));
      const [b, s] = [median(cpuPerRequest.baseline), median(cpuPerRequest.subject)];
      return { ...c, cpu: { baseline: b, subject: s, rounds: cpuPerRequest.subject.map((x, i) => x / cpuPerRequest.baseline[i]) } };
    };
    const cost = (c: Comparison) => (1 - c.ratio) * 100;
    const cpuLine = (c: Awaited<ReturnType<typeof against>>) =>
      `  CPU per request ${c.cpu.baseline.toFixed(0)} µs baseline, ${c.cpu.subject.toFixed(0)} µs subject: ${((c.cpu.subject / c.cpu.baseline - 1) * 100).toFixed(1)}% (rounds: ${c.cpu.rounds.map((r) => ((r - 1) * 100).toFixed(1) + '%').join(', ')})`;

    const metrics = await against(metered);
    const noise = await against(twin);
    const tracing = await against(traced);
    if (traced.runtime.services.tracing === null || sink.exports() === 0) throw new Error('the traced product exported no spans');
    const title = (what: string) => `POST /api/v1/constituents, ${CONNECTIONS} connections, ${what}`;
    const labels = (subject: string) => ({ baseline: 'metrics off, tracing off', subject });
    return {
      name: 'observability',
      lines: [
        ...formatComparison(title('metrics on (scraped every second)'), labels('metrics on'), metrics, [
          { label: `metrics cost <= 3% of throughput (${cost(metrics).toFixed(1)}%)`, ok: cost(metrics) <= 3 },
        ]),
        cpuLine(metrics),
        ...formatComparison(title('tracing off against tracing off (the noise of the machine)'), labels('tracing off, a second product'), noise, [
          { label: `tracing off costs nothing measurable (${cost(noise).toFixed(1)}%, within the rounds' spread)`, ok: Math.abs(cost(noise)) <= 3 },
        ]),
        cpuLine(noise),
        ...formatComparison(title(`tracing on (every request sampled, ${sink.exports()} OTLP exports to a local sink)`), labels('tracing on'), tracing, [
          { label: `tracing cost <= 15% of throughput (${cost(tracing).toFixed(1)}%)`, ok: cost(tracing) <= 15 },
        ]),
        cpuLine(tracing),
      ],
    };
  } finally {
    stopScraping();
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    for (const p of [baseline, twin, metered, traced]) await p.close();
    await sink.close();
  }
}

import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type BenchRequest, type Comparison, compare, formatComparison, load, type Measure, median, percentile } from './lib.js';
import { person } from './names.js';
import { ADMIN, type Product, startProduct } from './product.js';
import { Metrics } from '../runtime/metrics.js';
import { openTracing } from '../runtime/tracing.js';
import type { Tracing } from '../runtime/tracing-port.js';
import type { SpanSink } from '../runtime/tracing-export.js';

/**
 * Issue 33 point 6: what metrics and tracing cost a write. Four products side by side, the same
 * write load on each in alternated rounds (lib.ts compare), each figure beside its baseline:
 *   - metrics off, tracing off: the baseline;
 *   - metrics on (scraped every second, as a busy Prometheus would): at most 3% fewer writes;
 *   - tracing off against tracing off (a second, identical product): the noise of the machine,
 *     which is what "nothing measurable" is judged against (unset, no tracing hook is installed);
 *   - tracing on (every request sampled, spans sent over OTLP/HTTP to a sink in another process,
 *     as a collector would be): at most 15%.
 * Throughput on a machine shared with other work swings by tens of percent from one round to the
 * next, so each side's CPU time per request is printed too (the process's CPU, load generator
 * included, over the round, divided by its requests). Both swing on a loaded machine; what does
 * not is the instrumentation's own work per write, timed alone in a loop (hookCosts below) and
 * set against the CPU a write takes.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARMUP_MS = 1_000;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 3_000);
const CONNECTIONS = 64;

/** The OTLP/HTTP sink (otlp-sink.ts), in a process of its own: a collector's cost is not ours. */
async function startSink(): Promise<{ url: string; exports: () => Promise<number>; close(): Promise<void> }> {
  const child = fork(fileURLToPath(new URL('./otlp-sink.js', import.meta.url)), [], { stdio: 'inherit' });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the OTLP sink exited ${code} before listening`)));
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    url: `http://127.0.0.1:${port}`,
    exports: () =>
      new Promise<number>((resolve) => {
        child.once('message', (m: { exports: number }) => resolve(m.exports));
        child.send('count');
      }),
    close: async () => {
      child.send('close');
      await exited;
    },
  };
}

/** Scrapes /metrics every second while it runs, as Prometheus would. */
function scraping(product: Product): () => void {
  const timer = setInterval(() => {
    void fetch(`${product.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.text(), () => undefined);
  }, 1_000);
  return () => clearInterval(timer);
}

/**
 * The main thread's CPU time in µs (Linux: /proc), NaN elsewhere. The process's figure counts
 * the load generator's thread, the writer's and projector's threads and tracing's export thread
 * too; the main thread is where a request's own work is done. schedstat counts nanoseconds, where
 * `stat` counts ticks of 10 ms, a few percent of a round's main-thread time.
 */
function mainThreadCpu(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1000;
  } catch {
    return NaN;
  }
}

/**
 * CPU µs per call of `fn` (this process's, all threads), the median of 5 batches of `n` after
 * `warmUp` batches (the JIT's): CPU, not wall time, so neither the other work on the machine nor a wait for the
 * sink's answer counts.
 */
async function perCall(n: number, fn: (i: number) => void | Promise<void>, after?: () => Promise<void>, warmUp = 1): Promise<number> {
  return (await perCallOnMain(n, fn, after, warmUp)).all;
}

/** perCall, with the main thread's share apart (tracing exports from a thread of its own). */
async function perCallOnMain(n: number, fn: (i: number) => void | Promise<void>, after?: () => Promise<void>, warmUp = 1): Promise<{ all: number; main: number }> {
  const batches: number[] = [];
  const mains: number[] = [];
  for (let b = 0; b < warmUp + 5; b++) {
    const [c0, m0] = [process.cpuUsage(), mainThreadCpu()];
    for (let i = 0; i < n; i++) await fn(i);
    await after?.();
    const c = process.cpuUsage(c0);
    if (b >= warmUp) {
      batches.push((c.user + c.system) / n);
      mains.push((mainThreadCpu() - m0) / n);
    }
  }
  return { all: median(batches), main: median(mains) };
}

/**
 * What one POST /api/v1/constituents asks of the instrumentation, alone: with metrics, one
 * request counted and two appends timed (the record's and, for one in ten, an id block's); with
 * tracing, its four spans (request, command, append, wait) made,
 * batched and exported as OTLP JSON to the sink; and a bare loop of the same shape as baseline.
 */
async function hookCosts(sinkUrl: string): Promise<{ bare: number; metrics: number; scrape: number; spans: number; tracing: number; tracingMain: number }> {
  const noop = async () => undefined;
  const bareOf = await perCallOnMain(20_000, async () => {
    await noop();
    await noop();
  });
  const bare = bareOf.all;
  const metrics = new Metrics({ followers: async () => [{ name: 'read-models', state: 'caught_up', behind: 0 }], queueDepth: async () => 0, dataDir: null });
  const metered = await perCall(20_000, async (i) => {
    await noop();
    metrics.appendedTo('constituent-1', 2, 0.0004);
    if (i % 10 === 0) metrics.appendedTo('ids-constituent', 1, 0.0004);
    await noop();
    metrics.request('POST', '/api/v1/constituents', 201, 0.004);
  });
  const scrape = await perCall(200, async () => void (await metrics.text()));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sinkUrl;
  const headers = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
  // One write's spans, in batches under the span processor's queue (2,048 spans), each flushed:
  // with the OTLP exporter the export is counted; with one that drops them, the spans alone.
  const spansOf = async (tracing: Tracing) => {
    const cost = await perCallOnMain(
      400,
      async () => {
        const span = tracing.request('POST', headers);
        await span.span('command constituent', async (command) => {
          command.traceparent();
          await command.span('append', noop);
        });
        await span.span('wait for read models', noop);
        span.end('/api/v1/constituents', 201);
      },
      () => tracing.flush(),
      10,
    );
    await tracing.close();
    return cost;
  };
  const dropped: SpanSink = { add: () => undefined, flush: async () => undefined, close: async () => undefined };
  const spans = (await spansOf(openTracing('bench', { sink: dropped }))).all;
  const traced = await spansOf(openTracing('bench'));
  return { bare, metrics: metered, scrape, spans, tracing: traced.all, tracingMain: traced.main - bareOf.main };
}

/** The rounds' inter-quartile range of subject/baseline throughput: how far one round's ratio strays. */
function quartiles(c: Comparison): [number, number] {
  const ratios = c.rounds.map((r) => r.subject.rps / r.baseline.rps).sort((a, b) => a - b);
  return [percentile(ratios, 0.25), percentile(ratios, 0.75)];
}

/**
 * `BENCH_PART=hooks`: the instrumentation alone, in a loop (seconds); `BENCH_PART=tracing`: only
 * tracing on against the baseline (a minute), to try a change to tracing by; otherwise everything.
 */
export async function run(): Promise<{ name: string; lines: string[] }> {
  const sink = await startSink();
  const part = process.env.BENCH_PART;
  if (part === 'hooks') {
    const h = await hookCosts(sink.url).finally(() => sink.close());
    const us = (x: number) => `${(x - h.bare).toFixed(1)} µs a write`;
    return { name: 'observability (hooks only)', lines: [`metrics ${us(h.metrics)}; tracing on ${us(h.tracing)}, the main thread's share ${h.tracingMain.toFixed(1)} µs (the spans without their export ${us(h.spans)}); a scrape ${(h.scrape / 1000).toFixed(2)} ms`] };
  }
  const all = part !== 'tracing';
  const off = { metrics: false, env: {} };
  const baseline = await startProduct(off);
  const twin = all ? await startProduct(off) : null;
  const metered = all ? await startProduct({ metrics: true, env: {} }) : null;
  // The exporter reads the standard variables from the process environment.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.url;
  // BENCH_SAMPLER=parentbased_traceidratio:0.1 (say) samples as OTEL_TRACES_SAMPLER would; by
  // default every request is sampled. The SDK reads its sampler from the process environment.
  const [sampler, samplerArg] = (process.env.BENCH_SAMPLER ?? '').split(':');
  if (sampler) Object.assign(process.env, { OTEL_TRACES_SAMPLER: sampler, ...(samplerArg ? { OTEL_TRACES_SAMPLER_ARG: samplerArg } : {}) });
  const traceEnv = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
  const traced = await startProduct({ metrics: false, env: traceEnv });
  const stopScraping = metered ? scraping(metered) : () => undefined;
  try {
    const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify(person(i, '{{n}}')));
    const writes = (p: Product): BenchRequest[] =>
      bodies.map((body) => ({ method: 'POST', path: '/api/v1/constituents', headers: { 'content-type': 'application/json', authorization: p.auth }, body }));
    const spec = (p: Product) => ({ connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS, origin: p.origin, requests: writes(p) });
    const cpuPerRequest = { baseline: [] as number[], subject: [] as number[] };
    const mainPerRequest = { baseline: [] as number[], subject: [] as number[] };
    const timed = (p: Product, side: 'baseline' | 'subject') => async (): Promise<Measure> => {
      const [cpu0, main0, t0] = [process.cpuUsage(), mainThreadCpu(), performance.now()];
      const m = await load(spec(p));
      const cpu = process.cpuUsage(cpu0);
      const wall = (performance.now() - t0) / 1000;
      // CPU busy per wall second over the whole round, divided by requests per second.
      cpuPerRequest[side].push((cpu.user + cpu.system) / wall / m.rps);
      mainPerRequest[side].push((mainThreadCpu() - main0) / wall / m.rps);
      return m;
    };
    const against = async (subject: Product) => {
      for (const x of [cpuPerRequest, mainPerRequest]) {
        x.baseline = [];
        x.subject = [];
      }
      const c = await compare(ROUNDS, timed(baseline, 'baseline'), timed(subject, 'subject'));
      const of = (x: typeof cpuPerRequest) => ({ baseline: median(x.baseline), subject: median(x.subject), rounds: x.subject.map((v, i) => v / x.baseline[i]) });
      const others = { baseline: cpuPerRequest.baseline.map((v, i) => v - mainPerRequest.baseline[i]), subject: cpuPerRequest.subject.map((v, i) => v - mainPerRequest.subject[i]) };
      return { ...c, cpu: of(cpuPerRequest), main: of(mainPerRequest), others: of(others) };
    };
    const cost = (c: Comparison) => (1 - c.ratio) * 100;
    const cpuLine = (c: Awaited<ReturnType<typeof against>>) =>
      [
        ['CPU per request (the process)', c.cpu],
        ['the main thread alone', c.main],
        ['the other threads (the process less the main thread)', c.others],
      ]
        .filter(([, x]) => !Number.isNaN((x as typeof c.cpu).baseline))
        .map(([what, x]) => {
          const { baseline: b, subject: s, rounds } = x as typeof c.cpu;
          // The median of the rounds' own ratios, as for throughput: each side's median may come from another round.
          return `  ${what}: ${b.toFixed(0)} µs baseline, ${s.toFixed(0)} µs subject (medians); ${((median(rounds) - 1) * 100).toFixed(1)}% (median of the rounds: ${rounds.map((r) => ((r - 1) * 100).toFixed(1) + '%').join(', ')})`;
        })
        .join('\n');
    const title = (what: string) => `POST /api/v1/constituents, ${CONNECTIONS} connections, ${what}`;
    const labels = (subject: string) => ({ baseline: 'metrics off, tracing off', subject });
    const lines: string[] = [];

    if (metered && twin) {
      const metrics = await against(metered);
      lines.push(
        ...formatComparison(title('metrics on (scraped every second)'), labels('metrics on'), metrics, [
          { label: `metrics cost <= 3% of throughput (${cost(metrics).toFixed(1)}%)`, ok: cost(metrics) <= 3 },
        ]),
        cpuLine(metrics),
      );
      // Two identical products differ by the machine's noise alone: "nothing measurable" is a
      // median ratio within 3% of 1, or with 1 inside the rounds' inter-quartile range.
      const noise = await against(twin);
      const [q1, q3] = quartiles(noise);
      const within = Math.abs(cost(noise)) <= 3 || (q1 <= 1 && 1 <= q3);
      lines.push(
        ...formatComparison(title('tracing off against tracing off (the noise of the machine)'), labels('tracing off, a second product'), noise, [
          { label: `tracing off costs nothing measurable (median ${noise.ratio.toFixed(2)}x, ${cost(noise).toFixed(1)}%; rounds' inter-quartile range ${q1.toFixed(2)}-${q3.toFixed(2)}x; within 3% or 1 inside it)`, ok: within },
        ]),
        cpuLine(noise),
      );
    }
    const tracing = await against(traced);
    const exported = await sink.exports();
    if (traced.runtime.services.tracing === null || (exported === 0 && sampler !== 'always_off')) throw new Error('the traced product exported no spans');
    const [t1, t3] = quartiles(tracing);
    lines.push(
      ...formatComparison(title(`tracing on (${sampler ? `sampler ${process.env.BENCH_SAMPLER}` : 'every request sampled'}, ${exported} OTLP exports to a sink in another process)`), labels('tracing on'), tracing, [
        { label: `tracing cost <= 15% of throughput (${cost(tracing).toFixed(1)}%; rounds' inter-quartile range ${t1.toFixed(2)}-${t3.toFixed(2)}x)`, ok: cost(tracing) <= 15 },
      ]),
      cpuLine(tracing),
    );
    const hooks = await hookCosts(sink.url);
    const cpu = tracing.cpu.baseline;
    const share = (us: number) => `${us.toFixed(1)} µs a write, ${((us / cpu) * 100).toFixed(1)}% of the ${cpu.toFixed(0)} µs of CPU a write took here`;
    lines.push(
      'The instrumentation alone, per write (CPU time in a loop; the bare loop of the same shape subtracted):',
      `  metrics (a request counted, appends timed): ${share(hooks.metrics - hooks.bare)}`,
      `  a scrape of /metrics: ${(hooks.scrape / 1000).toFixed(2)} ms (every 15 s by deploy/'s configuration)`,
      `  tracing on, the 4 spans made and batched, not exported: ${share(hooks.spans - hooks.bare)}`,
      `  tracing on, the 4 spans made, batched and exported as OTLP JSON: ${share(hooks.tracing - hooks.bare)}, of which the main thread ${hooks.tracingMain.toFixed(1)} µs`,
      `  target metrics <= 3%: ${(hooks.metrics - hooks.bare) / cpu <= 0.03 ? 'met' : 'MISSED'}; tracing on <= 15%: ${(hooks.tracing - hooks.bare) / cpu <= 0.15 ? 'met' : 'MISSED'}; tracing off: no hook installed, 0 µs by construction`,
    );
    return { name: all ? 'observability' : 'observability (tracing only)', lines };
  } finally {
    stopScraping();
    for (const k of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG']) delete process.env[k];
    for (const p of [baseline, twin, metered, traced]) await p?.close();
    await sink.close();
  }
}

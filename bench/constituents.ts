import Fastify from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteEventLog } from '../eventlog/sqlite.js';
import { createConstituent } from '../commands/constituents.js';
import type { Values } from '../domain/shared/fields.js';
import { NO_STREAM } from '../eventlog/port.js';
import { IdAllocator } from '../commands/ids.js';
import { decideCreate, validateCreate } from '../domain/constituent/decide.js';
import { constituentEvolver, constituentStream } from '../domain/constituent/events.js';
import { ConstituentBody } from '../validation/bodies.js';
import { type BenchRequest, compare, formatComparison, formatMeasure, load, mainThreadCpuUs, type Measure, median, threadCpuUs } from './lib.js';
import { person } from './names.js';
import { type Product, startProduct } from './product.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_MS = 1_000;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4_000);
const WRITE_CONNECTIONS = 64;
const SEARCH_CONNECTIONS = 8;
const SEARCH_SIZE = 100_000;
const READ_SIZE = 10_000;
const READ_CONNECTIONS = 64;

/**
 * The baseline for writes (issue 29): a bare Fastify route that validates the same body against
 * the same JSON schema (the create's, `validation/bodies.ts`, with Fastify's own Ajv) and answers
 * 201, storing nothing: the ceiling of any write path over the same connections on this machine.
 */
async function startBaseline() {
  const app = Fastify({ logger: false });
  let n = 0;
  app.post('/bare', { schema: { body: ConstituentBody } }, async (_request, reply) => reply.code(201).send({ id: ++n }));
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { origin, close: () => app.close() };
}

async function writes(): Promise<string[]> {
  const before = new Set(threadCpuUs().keys());
  const product = await startProduct();
  // The product's threads, in the order they started (the log's writer first, then the read
  // models' projector thread, then the others); the load generator's threads come later.
  const threads = [process.pid, ...[...threadCpuUs().keys()].filter((t) => !before.has(t)).sort((a, b) => a - b)];
  const baseline = await startBaseline();
  try {
    // Varied bodies; `{{n}}` keeps every email distinct.
    const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify(person(i, '{{n}}')));
    const json = { 'content-type': 'application/json' };
    const subjectReqs: BenchRequest[] = bodies.map((body) => ({ method: 'POST', path: '/api/v1/constituents', headers: { ...json, authorization: product.auth }, body }));
    const baselineReqs: BenchRequest[] = bodies.map((body) => ({ method: 'POST', path: '/bare', headers: json, body }));
    const spec = { connections: WRITE_CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS };
    const load0 = loadavg()[0];
    // CPU per write of each of the product's threads, warm-up included in the time (an over-estimate).
    const perWrite = threads.map(() => [] as number[]);
    // The threads the process had before the product: V8's and libuv's helpers (parallel GC,
    // compilation), shared by every isolate, the load generator's too; beside the bare route's.
    const helpers = [...before].filter((t) => t !== process.pid);
    const helperUs = { baseline: [] as number[], subject: [] as number[] };
    const measured = async (side: 'baseline' | 'subject', run: () => Promise<Measure>) => {
      const c0 = threadCpuUs();
      const m = await run();
      const c1 = threadCpuUs();
      const us = (ts: number[]) => ts.reduce((s, t) => s + (c1.get(t) ?? 0) - (c0.get(t) ?? 0), 0) / m.count;
      if (side === 'subject') threads.forEach((t, i) => perWrite[i].push(us([t])));
      helperUs[side].push(us(helpers));
      return m;
    };
    const c = await compare(
      ROUNDS,
      () => measured('baseline', () => load({ ...spec, origin: baseline.origin, requests: baselineReqs })),
      () => measured('subject', () => load({ ...spec, origin: product.origin, requests: subjectReqs })),
    );
    const busy = threads.map((t, i) => ({ label: i === 0 ? 'main' : `thread ${i}`, us: median(perWrite[i]) })).filter((t) => t.us >= 1);
    const cpuLine = `  server CPU per write (median of the rounds): ${busy.map((t) => `${t.label} ${t.us.toFixed(0)} µs`).join(', ')}; in all ${busy.reduce((n, t) => n + t.us, 0).toFixed(0)} µs (threads 1, 2: the log's writer and the projector thread); V8 and libuv helpers ${median(helperUs.subject).toFixed(0)} µs a write, ${median(helperUs.baseline).toFixed(0)} a request of the bare route (the load generator's GC and compilation run there too)`;
    return [...formatComparison(
      `POST /constituents, ${WRITE_CONNECTIONS} connections, rate limits off, SQLite log in WAL with synchronous=FULL (load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after)`,
      { baseline: 'bare Fastify, schema-validated, stores nothing', subject: 'POST /api/v1/constituents' },
      c,
      [
        { label: `throughput >= 0.25x baseline (${c.ratio.toFixed(2)}x)`, ok: c.ratio >= 0.25 },
        { label: `p99 <= 50 ms (${c.subject.p99.toFixed(1)} ms)`, ok: c.subject.p99 <= 50 },
      ],
    ), cpuLine];
  } finally {
    await baseline.close();
    await product.close();
  }
}

/**
 * The floor of each hop of one write (issue 29 item 3), each measured alone as a bare Fastify
 * route validating the same body with the same schema, in alternated rounds: the route alone;
 * plus a group-committed append to a log file of its own (writer thread, synchronous=FULL, no
 * projection); plus the whole command (`createConstituent` on the product's runtime: id, decide,
 * append, the projector thread's step, read-your-writes) answering the id only; the product's route.
 * Beside each rate, the CPU a request of each thread: the rates follow the machine's load, the
 * CPU a request much less, and it says which thread each hop costs.
 */
async function floors(): Promise<string[]> {
  const before = new Set(threadCpuUs().keys());
  const product = await startProduct();
  const productThreads = [...threadCpuUs().keys()].filter((t) => !before.has(t)).sort((a, b) => a - b);
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-floor-'));
  const beforeLog = new Set(threadCpuUs().keys());
  const log = new SqliteEventLog(path.join(dir, 'events.sqlite'));
  const logThreads = [...threadCpuUs().keys()].filter((t) => !beforeLog.has(t));
  // Threads of the process before the product: V8's and libuv's helpers (GC, compilation), shared
  // by every isolate, the load generator's included.
  const helpers = [...before].filter((t) => t !== process.pid);
  const known = new Set(threadCpuUs().keys());
  const app = Fastify({ logger: false });
  let n = 0;
  app.post('/bare', { schema: { body: ConstituentBody } }, async (_request, reply) => reply.code(201).send({ id: ++n }));
  app.post('/append', { schema: { body: ConstituentBody } }, async (request, reply) => {
    const id = ++n;
    await log.append(constituentStream(id), [{ type: 'ConstituentCreated', data: { id, fields: request.body as Values }, metadata: { team: 1, source: 'Public API', keyName: 'Bench', correlationId: request.id, at: new Date().toISOString(), revision: 1 } }], NO_STREAM);
    return reply.code(201).send({ id });
  });
  const ctx = () => ({ team: product.team, source: 'Public API' as const, keyName: 'Bench', correlationId: 'bench', now: new Date() });
  app.post('/command', { schema: { body: ConstituentBody } }, async (request, reply) => reply.code(201).send({ id: await createConstituent(product.runtime.services, ctx(), request.body as Values) }));
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const bodies = Array.from({ length: 500 }, (_, i) => JSON.stringify(person(i, '{{n}}')));
    const json = { 'content-type': 'application/json' };
    const sides = [
      { label: 'bare route (validates)', origin, path: '/bare', headers: json },
      { label: '+ append, no projection', origin, path: '/append', headers: json },
      { label: '+ command, projection, settle', origin, path: '/command', headers: json },
      { label: 'POST /api/v1/constituents', origin: product.origin, path: '/api/v1/constituents', headers: { ...json, authorization: product.auth } },
    ];
    const load0 = loadavg()[0];
    const rounds: Array<Array<{ m: Measure; cpu: number[] }>> = [];
    const groups = [[process.pid], [productThreads[0], ...logThreads], [productThreads[1]], productThreads.slice(2), helpers];
    for (let r = 0; r < ROUNDS; r++) {
      const round: Array<{ m: Measure; cpu: number[] }> = [];
      for (const side of sides) {
        (globalThis as { gc?: () => void }).gc?.();
        const c0 = threadCpuUs();
        const m = await load({ connections: WRITE_CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS, origin: side.origin, requests: bodies.map((body) => ({ method: 'POST', path: side.path, headers: side.headers, body })) });
        const c1 = threadCpuUs();
        // Per request measured; the warm-up's requests ran too, so every figure is a little high, alike for each side.
        const per = (ts: number[]) => ts.reduce((s, t) => s + (c1.get(t) ?? 0) - (c0.get(t) ?? 0), 0) / m.count;
        const loadGenerator = [...c1.keys()].filter((t) => !known.has(t) && !c0.has(t));
        round.push({ m, cpu: [...groups.map(per), per(loadGenerator)] });
      }
      rounds.push(round);
    }
    const cpuOf = (i: number) => groups.concat([[]]).map((_, g) => median(rounds.map((round) => round[i].cpu[g])));
    return [
      `The floor of each hop of POST /constituents, ${WRITE_CONNECTIONS} connections, ${ROUNDS} alternated rounds, medians (load average ${load0.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after)`,
      ...sides.flatMap((side, i) => {
        const m = (f: (x: Measure) => number) => median(rounds.map((round) => f(round[i].m)));
        const line = formatMeasure(side.label, { rps: m((x) => x.rps), p50: m((x) => x.p50), p90: m((x) => x.p90), p99: m((x) => x.p99), count: 0, errors: 0 });
        const [main, writer, projector, others, v8, client] = cpuOf(i);
        return [
          `  ${line}   ${median(rounds.map((round) => round[i].m.rps / round[0].m.rps)).toFixed(2)}x the bare route`,
          `    CPU µs a request: main ${main.toFixed(0)}, log writer ${writer.toFixed(0)}, projector thread ${projector.toFixed(0)}, the product's other threads ${others.toFixed(0)}, V8 and libuv helpers ${v8.toFixed(0)}; server in all ${(main + writer + projector + others + v8).toFixed(0)}; load generator ${client.toFixed(0)}`,
        ];
      }),
    ];
  } finally {
    await app.close();
    await log.close();
    rmSync(dir, { recursive: true, force: true });
    await product.close();
  }
}

/**
 * Seeds `n` constituents straight into the log (the commands' own decide, appended in large
 * group-committed batches), then waits for the read models to catch up. Going through HTTP
 * would make the seed the longest part of the run.
 */
export async function seed(product: Product, n: number): Promise<{ firstId: number; ms: number }> {
  const t0 = performance.now();
  const { log } = product.runtime.services;
  // One block for the whole seed: ids are reserved durably as the API's allocator does, but
  // not 100 at a time (each reservation re-reads the id stream).
  const ids = new IdAllocator(log, n);
  const metadata = { team: product.team, source: 'Public API' as const, keyName: 'Bench', correlationId: 'bench-seed', at: new Date().toISOString() };
  let firstId = 0;
  for (let start = 0; start < n; start += 5_000) {
    const appends: Array<Promise<unknown>> = [];
    for (let i = start; i < Math.min(n, start + 5_000); i++) {
      const id = await ids.next('constituent');
      firstId ||= id;
      const events = decideCreate({ id, fields: validateCreate(person(i)) }, constituentEvolver.initial());
      // Stamped with the record's revision, as commands/aggregate.ts handle() stamps every append.
      appends.push(log.append(constituentStream(id), events.map((e) => ({ ...e, metadata: { ...metadata, revision: 1 } })), NO_STREAM));
    }
    await Promise.all(appends);
  }
  const head = (await log.head())!;
  for (;;) {
    try {
      await product.runtime.services.settle(head);
      break;
    } catch {
      // waitFor gives up after its write time-out; a 100,000-event catch-up may take longer.
    }
  }
  return { firstId, ms: performance.now() - t0 };
}

async function search(): Promise<string[]> {
  const product = await startProduct();
  try {
    const { firstId, ms } = await seed(product, SEARCH_SIZE);
    const terms = ['Nguyen', 'son.da', String(firstId + 54_321), '4242@', 'an'];
    const auth = { authorization: product.auth };
    const subjectReqs: BenchRequest[] = terms.map((t) => ({ method: 'GET', path: `/api/v1/constituents?search=${encodeURIComponent(t)}`, headers: auth }));
    const baselineReqs: BenchRequest[] = [{ method: 'GET', path: '/healthz' }];
    // The memory store builds its search index on the first search after a start; that one
    // search is reported, not mixed into the steady-state figures.
    const t0 = performance.now();
    const first = await product.app.inject({ method: 'GET', url: subjectReqs[0].path, headers: auth });
    if (first.statusCode !== 200) throw new Error(`search: ${first.statusCode} ${first.body}`);
    const firstMs = performance.now() - t0;
    const spec = { connections: SEARCH_CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS, origin: product.origin };
    const c = await compare(
      ROUNDS,
      () => load({ ...spec, requests: baselineReqs }),
      () => load({ ...spec, requests: subjectReqs }),
    );
    return [
      ...formatComparison(
        `GET /constituents?search=, ${SEARCH_SIZE.toLocaleString('en-US')} constituents in one team (seeded in ${(ms / 1000).toFixed(1)} s; first search, building the index: ${firstMs.toFixed(0)} ms), ${SEARCH_CONNECTIONS} connections, terms ${terms.map((t) => JSON.stringify(t)).join(' ')}`,
        { baseline: 'GET /healthz (constant JSON)', subject: 'GET /api/v1/constituents?search=' },
        c,
        [{ label: `search p99 < 20 ms (${c.subject.p99.toFixed(1)} ms)`, ok: c.subject.p99 < 20 }],
      ),
    ];
  } finally {
    await product.close();
  }
}

/**
 * A single read by id with a valid key (issue 32 item 4): the key, the record and its ETag.
 * The baseline is `GET /healthz`, a constant answer on the same server, so the ratio is what the
 * read costs above the HTTP stack's own.
 */
async function reads(): Promise<string[]> {
  const product = await startProduct();
  try {
    const { firstId, ms } = await seed(product, READ_SIZE);
    const auth = { authorization: product.auth };
    const subjectReqs: BenchRequest[] = Array.from({ length: 500 }, (_, i) => ({ method: 'GET', path: `/api/v1/constituents/${firstId + ((i * 7919) % READ_SIZE)}`, headers: auth }));
    const check = await product.app.inject({ method: 'GET', url: subjectReqs[0].path, headers: auth });
    if (check.statusCode !== 200 || !check.headers.etag) throw new Error(`read: ${check.statusCode} ${check.body}`);
    const spec = { connections: READ_CONNECTIONS, warmupMs: WARMUP_MS, durationMs: DURATION_MS, origin: product.origin };
    const load0 = loadavg()[0];
    // The server's CPU per request, warm-up included in the time (an over-estimate on both sides alike).
    const cpu = { baseline: [] as number[], subject: [] as number[] };
    const timed = async (side: 'baseline' | 'subject', requests: BenchRequest[]) => {
      const c0 = mainThreadCpuUs();
      const m = await load({ ...spec, requests });
      cpu[side].push((mainThreadCpuUs() - c0) / m.count);
      return m;
    };
    const c = await compare(
      ROUNDS,
      () => timed('baseline', [{ method: 'GET', path: '/healthz' }]),
      () => timed('subject', subjectReqs),
    );
    const us = (xs: number[]) => `${median(xs).toFixed(0)} µs (rounds ${xs.map((x) => x.toFixed(0)).join(', ')})`;
    return [
      ...formatComparison(
        `GET /constituents/:id with a valid key, ${READ_SIZE.toLocaleString('en-US')} constituents (seeded in ${(ms / 1000).toFixed(1)} s), ${READ_CONNECTIONS} connections, load average ${load0.toFixed(1)} then ${loadavg()[0].toFixed(1)}`,
        { baseline: 'GET /healthz (constant JSON)', subject: 'GET /api/v1/constituents/:id' },
        c,
        [{ label: `throughput >= 0.5x /healthz (${c.ratio.toFixed(2)}x)`, ok: c.ratio >= 0.5 }],
      ),
      `  server main-thread CPU per request: /healthz ${us(cpu.baseline)}; the read ${us(cpu.subject)}; ratio ${(median(cpu.baseline) / median(cpu.subject)).toFixed(2)}x`,
    ];
  } finally {
    await product.close();
  }
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  const only = process.env.BENCH_PART;
  const lines: string[] = [];
  if (!only || only === 'writes') lines.push(...(await writes()));
  if (!only || only === 'search') lines.push(...(await search()));
  if (!only || only === 'read') lines.push(...(await reads()));
  // Only when named: the floors of the write's hops take four sides' rounds.
  if (only === 'floors') lines.push(...(await floors()));
  return { name: 'constituents', lines };
}

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Where an import's wall time goes (`BENCH_IMPORT_TIMELINE=1`): every thread's CPU sampled every
 * 20 ms (the server's threads in this process, the CLI's process), the CLI's phases from its User
 * Timing marks (cli/import.ts, reported by bench/cpu-report.ts) and each request's stay on the
 * server (Node's http diagnostics channels), laid out phase by phase: how busy each thread and the
 * two cores were while the CLI read, validated, filled the pipeline, streamed and drained it.
 */
const EVERY_MS = 20;

interface Sample {
  t: number;
  /**
   * Cumulative ns on a core and ns runnable but waiting for one (/proc's schedstat): the CLI's
   * process, the server's main, writer and projector threads, then every server thread. The wait
   * is what other work on the machine took from ours; running plus waiting is what our threads
   * asked for, which tells our own idle from the machine's load.
   */
  run: number[];
  wait: number[];
}

const now = () => performance.timeOrigin + performance.now();

function schedstat(file: string): [number, number] {
  try {
    const [run, wait] = readFileSync(file, 'utf8').split(' ');
    return [Number(run), Number(wait)];
  } catch {
    // The thread ended meanwhile.
    return [0, 0];
  }
}

/**
 * Run and wait ns of every thread of a process, into `seen`: a thread that has ended keeps its
 * last figures there, so the sums only grow.
 */
function tasks(pid: number | 'self', seen: Map<number, [number, number]>): Map<number, [number, number]> {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return seen;
  }
  for (const tid of tids) {
    const v = schedstat(`/proc/${pid}/task/${tid}/schedstat`);
    if (v[0] || v[1]) seen.set(Number(tid), v);
  }
  return seen;
}

const sum = (m: Map<number, [number, number]>, i: 0 | 1) => [...m.values()].reduce((a, v) => a + v[i], 0);

export interface Timeline {
  /** The CLI's process, once spawned (its CPU is sampled from then). */
  child(pid: number): void;
  /** Stops sampling; the lines of the report, given the CLI's marks (epoch ms) and its end. */
  report(marks: Array<[string, number]>, spawned: number, closed: number): string[];
}

export function startTimeline(threads: number[]): Timeline {
  const samples: Sample[] = [];
  let pid = 0;
  const ourThreads = new Map<number, [number, number]>();
  const cliThreads = new Map<number, [number, number]>();
  const take = () => {
    const ours = tasks('self', ourThreads);
    const cli = pid ? tasks(pid, cliThreads) : cliThreads;
    const own = threads.map((t) => ours.get(t) ?? [0, 0]);
    samples.push({ t: now(), run: [sum(cli, 0), ...own.map((v) => v[0]), sum(ours, 0)], wait: [sum(cli, 1), ...own.map((v) => v[1]), sum(ours, 1)] });
  };
  take();
  const timer = setInterval(take, EVERY_MS);
  const requests: Array<{ url: string; start: number; end: number }> = [];
  const open = new Map<IncomingMessage, { url: string; start: number; end: number }>();
  const onStart = (m: unknown) => {
    const { request } = m as { request: IncomingMessage };
    open.set(request, { url: request.url ?? '', start: now(), end: NaN });
  };
  const onFinish = (m: unknown) => {
    const { request } = m as { request: IncomingMessage };
    const r = open.get(request);
    if (!r) return;
    open.delete(request);
    r.end = now();
    requests.push(r);
  };
  subscribe('http.server.request.start', onStart);
  subscribe('http.server.response.finish', onFinish);

  return {
    child: (p) => {
      pid = p;
    },
    report(marks, spawned, closed) {
      clearInterval(timer);
      take();
      unsubscribe('http.server.request.start', onStart);
      unsubscribe('http.server.response.finish', onFinish);
      return lay(samples, requests, new Map(marks), spawned, closed);
    },
  };
}

/** A cumulative figure at time t, between the samples around it. */
function at(samples: Sample[], t: number, of: 'run' | 'wait', k: number): number {
  const i = samples.findIndex((s) => s.t >= t);
  if (i < 0) return samples[samples.length - 1][of][k];
  if (i === 0) return samples[0][of][k];
  const a = samples[i - 1];
  const b = samples[i];
  return a[of][k] + ((b[of][k] - a[of][k]) * (t - a.t)) / (b.t - a.t || 1);
}

const pct = (ns: number, ms: number) => Math.round(ns / 1e4 / ms);

function lay(samples: Sample[], requests: Array<{ url: string; start: number; end: number }>, marks: Map<string, number>, spawned: number, closed: number): string[] {
  const sends = [...marks.keys()].filter((k) => k.startsWith('import:send:')).length;
  const mark = (name: string) => marks.get(name) ?? NaN;
  const lastSend = mark(`import:send:${sends - 1}`);
  const lastAnswer = Math.max(...[...marks].filter(([k]) => k.startsWith('import:answer:')).map(([, t]) => t));
  const phases: Array<[string, number, number]> = [
    ['node start, CLI modules loaded', spawned, mark('import:start')],
    ['file read', mark('import:start'), mark('import:read')],
    ['every row parsed and validated', mark('import:read'), mark('import:validated')],
    ['probe and file hash, to the first send', mark('import:validated'), mark('import:send:0')],
    ['pipeline filling, to the first answer', mark('import:send:0'), mark('import:answer:0')],
    ['streaming, to the last send', mark('import:answer:0'), lastSend],
    ['draining, to the last answer', lastSend, lastAnswer],
    ['CLI report and exit', lastAnswer, closed],
  ];
  const lines = [
    `timeline (${sends} batches): each thread's time on a core as % of the phase's wall, + its time runnable but waiting for a core; the two cores' use by ours, + what ours waited`,
    '  | phase | wall ms | CLI | main | writer | projector | other | two cores |',
    '  |---|---|---|---|---|---|---|---|',
  ];
  const row = (name: string, a: number, b: number) => {
    const ms = b - a;
    const d = (of: 'run' | 'wait') => {
      const v = [0, 1, 2, 3, 4].map((k) => at(samples, b, of, k) - at(samples, a, of, k));
      return [v[0], v[1], v[2], v[3], v[4] - v[1] - v[2] - v[3], v[0] + v[4]];
    };
    const run = d('run');
    const wait = d('wait');
    const cell = (k: number, cores = 1) => `${pct(run[k], ms * cores)}+${pct(wait[k], ms * cores)}%`;
    return `  | ${name} | ${ms.toFixed(0)} | ${cell(0)} | ${cell(1)} | ${cell(2)} | ${cell(3)} | ${cell(4)} | ${cell(5, 2)} |`;
  };
  for (const [name, a, b] of phases) lines.push(row(name, a, b));
  lines.push(row('**the whole import**', spawned, closed));

  // How many batches the server held at once while the CLI streamed: its pipeline's bubbles.
  const batches = requests.filter((r) => r.url.includes('/batch')).sort((a, b) => a.start - b.start);
  const from = mark('import:answer:0');
  const held = new Array(6).fill(0);
  const edges = batches.flatMap((r) => [
    [r.start, 1],
    [r.end, -1],
  ]).sort((x, y) => x[0] - y[0]);
  let inside = 0;
  let prev = from;
  for (const [t, step] of edges) {
    if (t > from && t <= lastSend) held[Math.min(inside, 5)] += t - Math.max(prev, from);
    prev = t;
    inside += step;
  }
  const span = lastSend - from;
  lines.push(`  streaming: the server held 0/1/2/3/4+ batches ${held.slice(0, 4).map((ms) => `${pct(ms * 1e6, span)}%`).join('/')}/${pct((held[4] + held[5]) * 1e6, span)}% of the time`);
  const stays = batches.map((r) => r.end - r.start).sort((a, b) => a - b);
  if (stays.length) lines.push(`  a batch on the server, arrival to answer: median ${stays[stays.length >> 1].toFixed(0)} ms, p90 ${stays[Math.floor(stays.length * 0.9)].toFixed(0)} ms, max ${stays[stays.length - 1].toFixed(0)} ms`);
  // Whether the batches in flight answer one by one (a smooth pipeline) or together (bursts: the
  // projector idle while the main thread reads the next ones, then the other way round).
  const ends = batches.map((r) => r.end).sort((a, b) => a - b);
  const gaps = ends.slice(1).map((t, i) => t - ends[i]).sort((a, b) => a - b);
  if (gaps.length > 4) {
    const q = (f: number) => gaps[Math.floor(gaps.length * f)].toFixed(1);
    lines.push(`  time between one batch's answer and the next's: p10 ${q(0.1)} ms, p25 ${q(0.25)}, median ${q(0.5)}, p75 ${q(0.75)}, p90 ${q(0.9)}`);
  }
  return lines;
}

import { median, processCpuUs, threadCpuUs } from './lib.js';

/**
 * Every thread's CPU for bench/sealing.ts: the main thread, the threads a side started (named in
 * the order they start), the helpers the process had before (V8's and libuv's), the rest and the
 * whole process, a unit of work, plain against sealed.
 */

/** This process's live threads by OS id; ids rise in the order threads start. */
export const liveThreads = () => new Set(threadCpuUs().keys());

/** The threads in `after` that were not in `before`, in the order they started. */
export const started = (before: Set<number>, after: Set<number>) => [...after].filter((t) => !before.has(t)).sort((a, b) => a - b);

/** Names for a side's own threads in the order they start; a thread past the names is numbered. */
export const named = (tids: number[], names: string[]) => tids.map((tid, i) => ({ tid, name: names[i] ?? `${names.at(-1)}+${i + 1 - names.length}` }));

export interface ThreadCpu {
  /** CPU µs a unit by name: `main`, each of the side's own threads, `V8 and libuv helpers`, `the rest` (the load generator and threads that ended meanwhile), `process`; and `cores`, the process's CPU over the wall time (of 2). */
  [name: string]: number;
}

/**
 * Runs `f` and gives every thread's CPU a unit of what it did (`units` of its answer): the main
 * thread, the side's own threads, the helpers the process had before any server (V8's GC and
 * compilation, libuv's), and the whole process (every thread, those that ended included), whose
 * rest is the load generator's. The CPU is counted in 10 ms ticks a thread.
 */
export async function measuredByThread<T>(own: Array<{ tid: number; name: string }>, helpers: number[], f: () => Promise<T>, units: (x: T) => number): Promise<{ out: T; cpu: ThreadCpu }> {
  const c0 = threadCpuUs();
  const p0 = processCpuUs();
  const t0 = performance.now();
  const out = await f();
  const c1 = threadCpuUs();
  const whole = processCpuUs() - p0;
  const wallUs = (performance.now() - t0) * 1000;
  const n = units(out);
  const us = (tids: number[]) => tids.reduce((sum, t) => sum + (c1.has(t) ? c1.get(t)! - (c0.get(t) ?? 0) : 0), 0);
  const cpu: ThreadCpu = { main: us([process.pid]) / n };
  for (const t of own) cpu[t.name] = us([t.tid]) / n;
  cpu['V8 and libuv helpers'] = us(helpers) / n;
  cpu.process = whole / n;
  cpu['the rest'] = cpu.process - Object.entries(cpu).reduce((sum, [k, v]) => (k === 'process' ? sum : sum + v), 0);
  cpu.cores = whole / wallUs;
  return { out, cpu };
}

/** The medians of each thread's CPU a unit, plain against sealed, and the whole process's. */
export function threadLines(label: string, rounds: Array<{ plain: ThreadCpu; sealed: ThreadCpu }>, notes = ''): string[] {
  const side = (s: 'plain' | 'sealed') => {
    const names = Object.keys(rounds[0][s]).filter((k) => k !== 'process' && k !== 'cores' && (k === 'the rest' || median(rounds.map((r) => r[s][k] ?? 0)) >= 0.5));
    return names.map((k) => `${k} ${median(rounds.map((r) => r[s][k] ?? 0)).toFixed(1)}`).join(', ');
  };
  return [
    `  ${label}, CPU µs by thread (medians of the rounds${notes})`,
    `    plain: ${side('plain')}`,
    `    sealed: ${side('sealed')}`,
    cpuLine('  the whole process', rounds.map((r) => ({ plain: r.plain.process, sealed: r.sealed.process }))),
    `      rounds, process µs plain/sealed: ${rounds.map((r) => `${r.plain.process.toFixed(0)}/${r.sealed.process.toFixed(0)}`).join(', ')}`,
    ...(rounds[0].plain.cores === undefined ? [] : [`      cores kept busy (the process's CPU over the wall time, of 2), rounds plain/sealed: ${rounds.map((r) => `${r.plain.cores.toFixed(2)}/${r.sealed.cores.toFixed(2)}`).join(', ')}`]),
  ];
}

/** The main thread's CPU per unit, plain against sealed: steadier than a rate where other processes take turns on the cores. */
export function cpuLine(label: string, rounds: Array<{ plain: number; sealed: number }>): string {
  const extra = (median(rounds.map((r) => r.sealed / r.plain)) - 1) * 100;
  const us = (side: 'plain' | 'sealed') => median(rounds.map((r) => r[side])).toFixed(0);
  return `  ${label}: plain ${us('plain')} µs, sealed ${us('sealed')} µs: ${extra >= 0 ? '+' : ''}${extra.toFixed(1)}%; rounds ${rounds.map((r) => ((r.sealed / r.plain - 1) * 100).toFixed(1)).join(', ')}%`;
}

import { readFileSync } from 'node:fs';

/**
 * One stretch of a rebuild thread's time (rebuild.ts): when it began and ended (ms since the
 * epoch, so the threads' stretches line up), the CPU time the thread used in it and the time it
 * was ready to run but waited for a core (null where the system does not tell a thread's own).
 * The rest of the stretch it was blocked: on a lock, on the other threads' messages, on the disk.
 */
export interface Span {
  what: string;
  start: number;
  end: number;
  cpuMs: number | null;
  queuedMs: number | null;
}

/** A thread's stretches, the waits that recur (a wait for each chunk) summed by what, and figures of its own. */
export interface ThreadTimeline {
  spans: Span[];
  waits: Record<string, { ms: number; times: number }>;
  notes: Record<string, number>;
}

/**
 * The CPU time this thread has used, in ms, where the system tells it (Linux: utime and stime of
 * /proc/thread-self/stat, in clock ticks of 10 ms); process.cpuUsage counts every thread.
 */
export function threadCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    // The fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** This thread's time on a core and waiting for one, in ms (Linux: /proc/thread-self/schedstat, in ns). */
function schedMs(): { cpu: number; queued: number } | null {
  try {
    const [cpu, queued] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { cpu: cpu / 1e6, queued: queued / 1e6 };
  } catch {
    return null;
  }
}

const now = () => performance.timeOrigin + performance.now();

/**
 * Where a rebuild thread's time goes, for the bench (docs/bench.md): a few reads of /proc a
 * stretch and a clock read a wait, nothing measurable beside a rebuild.
 */
export class Timeline {
  private readonly spans: Span[] = [];
  private readonly waits: ThreadTimeline['waits'] = {};
  private readonly notes: ThreadTimeline['notes'] = {};
  private open: { what: string; start: number; sched: ReturnType<typeof schedMs> } | null = null;

  /** Ends the stretch under way, if any, and begins `what`. */
  begin(what: string): void {
    const sched = schedMs();
    const t = now();
    this.close(t, sched);
    this.open = { what, start: t, sched };
  }

  /** Awaits `promise`, its wall time added to the waits of `what` (a wait that recurs within a stretch). */
  async wait(what: string, promise: Promise<void>): Promise<void> {
    const t = now();
    await promise;
    this.count(what, t);
  }

  /** Runs `fn`, a wait that blocks the thread, its wall time added to the waits of `what`. */
  waitFor<T>(what: string, fn: () => T): T {
    const t = now();
    try {
      return fn();
    } finally {
      this.count(what, t);
    }
  }

  /** Adds the wall time since `t` to the waits of `what`. */
  private count(what: string, t: number): void {
    const w = (this.waits[what] ??= { ms: 0, times: 0 });
    w.ms += now() - t;
    w.times++;
  }

  note(what: string, value: number): void {
    this.notes[what] = value;
  }

  done(): ThreadTimeline {
    this.close(now(), schedMs());
    return { spans: this.spans, waits: this.waits, notes: this.notes };
  }

  private close(t: number, sched: ReturnType<typeof schedMs>): void {
    if (!this.open) return;
    const from = this.open.sched;
    this.spans.push({
      what: this.open.what,
      start: this.open.start,
      end: t,
      cpuMs: from && sched ? sched.cpu - from.cpu : null,
      queuedMs: from && sched ? sched.queued - from.queued : null,
    });
    this.open = null;
  }
}

import cliProgress from 'cli-progress';

/**
 * Progress on stderr (decisions.md §13): on a terminal, a bar with rate and ETA; otherwise plain
 * lines such as `import: 500/1995 (350/s, ETA 4 s)`, at least every 10 % or 5 s, with no carriage
 * return or escape code, so a log file or CI output stays readable.
 */
export interface Progress {
  /** How far the work has come; `total` may grow (a log that runs on while rebuilding). */
  update(done: number, total?: number): void;
  /** The last figures, then the bar or the lines end. */
  stop(): void;
}

export interface ProgressOptions {
  /** The command's name, first on every line. */
  label: string;
  /** Units of work in all, when known in advance (rows, events); export has none. */
  total?: number;
  stream?: NodeJS.WriteStream;
  now?: () => number;
}

const PLAIN_EVERY_MS = 5_000;
const PLAIN_STEP = 0.1;

export function startProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  return stream.isTTY ? terminalBar(options, stream) : plainLines(options, stream);
}

/** `4 s`, `3 min`, `1.2 h`; `?` before there is a rate. */
export function duration(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '?';
  if (seconds < 90) return `${Math.max(0, Math.round(seconds))} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

/** The figures both forms show: done, total, rate and ETA. */
function figures(done: number, total: number | undefined, startedAt: number, at: number) {
  const seconds = (at - startedAt) / 1000;
  const rate = seconds > 0 ? done / seconds : 0;
  const eta = total === undefined ? null : rate > 0 ? Math.max(0, total - done) / rate : null;
  return { rate: Math.round(rate), eta };
}

function plainLines(options: ProgressOptions, stream: NodeJS.WritableStream): Progress {
  const now = options.now ?? (() => performance.now());
  const startedAt = now();
  let total = options.total;
  let done = 0;
  let lastAt = startedAt;
  let lastDone = 0;
  let told = false;
  let updated = false;
  let stopped = false;
  // The 5 s line comes from a timer as well as from update(): work that gives no figures for
  // longer (an import's first batch and its retries, a stalled export) still says it is alive.
  // Set again after every line, so no two lines are more than 5 s apart; unref'd, so it never
  // keeps the process alive, and cleared by stop(), which every command reaches on every path.
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(tell, PLAIN_EVERY_MS);
    timer.unref();
  };
  const tell = () => {
    const at = now();
    const { rate, eta } = figures(done, total, startedAt, at);
    const of = total === undefined ? `${done}` : `${done}/${total}`;
    stream.write(`${options.label}: ${of} (${rate}/s${total === undefined ? '' : `, ETA ${duration(eta)}`})\n`);
    lastAt = at;
    lastDone = done;
    told = true;
    arm();
  };
  arm();
  return {
    update(value, newTotal) {
      done = value;
      updated = true;
      if (newTotal !== undefined) total = newTotal;
      const step = total ? total * PLAIN_STEP : Infinity;
      if (done - lastDone >= step || now() - lastAt >= PLAIN_EVERY_MS) tell();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      if (updated && (!told || done !== lastDone)) tell();
    },
  };
}

function terminalBar(options: ProgressOptions, stream: NodeJS.WriteStream): Progress {
  // A count until a total is known (export never has one; a rebuild learns its log's length at its
  // first figures), then a bar with the total and an ETA from there on.
  const make = (total: number | undefined) => {
    const format = total !== undefined ? `${options.label} [{bar}] {value}/{total} ({rate}/s, ETA {eta_formatted})` : `${options.label}: {value} ({rate}/s)`;
    const made = new cliProgress.SingleBar({ format, stream, hideCursor: true, etaBuffer: 200, fps: 5 }, cliProgress.Presets.shades_classic);
    made.start(total ?? 0, 0, { rate: 0 });
    return made;
  };
  const startedAt = performance.now();
  let total = options.total;
  let bar = make(total);
  return {
    update(done, newTotal) {
      if (newTotal !== undefined && total === undefined) {
        bar.stop();
        bar = make((total = newTotal));
      } else if (newTotal !== undefined && newTotal !== total) bar.setTotal((total = newTotal));
      bar.update(done, { rate: figures(done, total, startedAt, performance.now()).rate });
    },
    stop() {
      bar.stop();
    },
  };
}

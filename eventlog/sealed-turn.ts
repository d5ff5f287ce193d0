import { Worker } from 'node:worker_threads';
import type { SealedParts } from './opened-cache.js';
import type { NewEvent } from './port.js';
import { type Data, fillSealed, type Split, splitData } from './sealed-data.js';
import type { Sealer } from './sealing.js';
import { THREAD_EXEC_ARGV, ThreadCalls } from './thread-calls.js';

/** An append's events as they go to the log, and what each had sealed (null: nothing personal). */
export interface SealedAppend {
  out: NewEvent[];
  parts: Array<SealedParts | null>;
}

interface Queued {
  stream: string;
  events: NewEvent[];
  sealer: Sealer;
  done: (sealed: SealedAppend) => void;
  failed: (err: unknown) => void;
}

/** One append of a turn, split (splitData): what remains is the seals. */
interface Work {
  q: Queued;
  splits: Split[];
}

export const erasedError = (stream: string) => new Error(`${stream} is erased: its data key is destroyed, so no personal value can be written to it`);

/** The thread's program: a module file beside this one, JavaScript as the key store's thread is (keys-thread.js). */
export const SEAL_THREAD = new URL('./seal-thread.js', import.meta.url);

/**
 * The fewest seals a turn goes to the thread with, unless one is there already: a turn's round
 * trip cost the main thread about 20 µs of CPU at load 10 (the message each way, and waking up
 * to the answer), about what 2-3 seals cost it, so a turn of one or two is sealed here (measured
 * with the turns alone: on the main thread 10-11 µs a write whatever the turn's size, on the
 * thread 40 µs at 1 a turn, 17 at 2, 12 at 4, 8 at 8; in a server a seal here costs more, cold).
 */
const THREAD_TURN = 3;

/**
 * The seals of one turn of the event loop's appends, made together. In a server one AES-GCM
 * set-up cost 4-6 µs of CPU hot but 20-35 µs run alone among a request's work, and even batched
 * the seals took ~16 µs a write of the main thread, which serves the API and is the bound: so the
 * appends that arrive together (the HTTP requests read in one poll) are split in a check-phase
 * callback, once they are all in, and their seals handed to a thread of their own in ONE message,
 * answered in one; the main thread keeps the values' JSON and the split. Until the thread has
 * started (and for good if it cannot start), and for a turn of one or two seals while none is on
 * the thread (THREAD_TURN), a turn is sealed here, back to back.
 *
 * A turn's appends are answered together and in order, so the appends of a stream reach the log
 * in the order they were made, and a turn's appends reach it in one turn (the group commit's
 * batching is as before). A thread that stops fails the appends of the turns it had (nothing of
 * them is written), and the next turn starts another.
 */
export class TurnSealer {
  private queue: Queued[] = [];
  private thread: SealThread | null = null;
  /** A thread stopped before it was ready: its program cannot run here, so every turn is sealed on this thread. */
  private threadless = false;
  private closed = false;

  constructor(
    /** Whether the stream's erasure has begun, as far as this process has seen. */
    private readonly isErased: (stream: string) => boolean,
    /** The sealing thread's program; null: every turn sealed on the main thread. */
    private readonly program: URL | null = SEAL_THREAD,
  ) {}

  seal(stream: string, events: NewEvent[], sealer: Sealer): Promise<SealedAppend> {
    return new Promise((done, failed) => {
      if (!this.queue.length) setImmediate(() => this.flush());
      this.queue.push({ stream, events, sealer, done, failed });
    });
  }

  /** Until every append handed over has been answered and taken up (gone on to the log, or failed). */
  async drain(): Promise<void> {
    for (;;) {
      if (this.queue.length) await new Promise((next) => setImmediate(next));
      else if (this.thread?.busy) {
        await this.thread.idle();
        // The appends' own continuations (on to the log) run first.
        await new Promise((next) => setImmediate(next));
      } else return;
    }
  }

  /** Drains, then ends the thread (the keys it holds go with its memory). */
  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    const thread = this.thread;
    this.thread = null;
    await thread?.close();
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    const work: Work[] = [];
    let seals = 0;
    for (const q of batch) {
      try {
        const splits = q.events.map((e) => splitData(e.data as Data));
        // An erasure begun while the append waited for its turn wins, and its key goes to no thread.
        if (this.isErased(q.stream) && splits.some((s) => s.parts)) {
          q.failed(erasedError(q.stream));
          continue;
        }
        for (const s of splits) seals += s.plain.length / 2;
        work.push({ q, splits });
      } catch (err) {
        q.failed(err);
      }
    }
    if (!work.length) return;
    // A turn with nothing to seal still goes behind a turn on the thread, not past it.
    const thread = seals || this.thread?.busy ? this.threadNow(seals) : null;
    if (!thread) return sealHere(work);
    thread.seal(work).then(
      (texts) => {
        let t = 0;
        for (const w of work) {
          for (const s of w.splits) for (let i = 0; i < s.plain.length; i += 2) fillSealed(s, s.plain[i], texts[t++]);
          answer(w);
        }
      },
      (err: unknown) => {
        for (const w of work) w.q.failed(err);
      },
    );
  }

  /**
   * The thread to seal this turn on, started at the first turn with a seal; null while it starts
   * (or cannot), and for a turn of fewer than THREAD_TURN seals while none is on the thread (the
   * turns' order is kept: a turn sealed here never overtakes one there).
   */
  private threadNow(seals: number): SealThread | null {
    if (this.threadless || this.closed || !this.program) return null;
    const thread = (this.thread ??= new SealThread(this.program, (stopped, wasReady) => {
      if (this.thread === stopped) this.thread = null;
      if (!wasReady) this.threadless = true;
    }));
    return thread.ready && (seals >= THREAD_TURN || thread.busy) ? thread : null;
  }
}

/** The turn sealed on the main thread, back to back. */
function sealHere(work: Work[]): void {
  for (const w of work) {
    try {
      for (const s of w.splits) for (let i = 0; i < s.plain.length; i += 2) fillSealed(s, s.plain[i], w.q.sealer.sealText(s.plain[i + 1], `${w.q.stream}:${s.plain[i]}`));
    } catch (err) {
      w.q.failed(err);
      continue;
    }
    answer(w);
  }
}

function answer({ q, splits }: Work): void {
  q.done({ out: q.events.map((e, i) => (splits[i].parts ? { ...e, data: splits[i].data } : e)), parts: splits.map((s) => s.parts) });
}

/**
 * The main thread's side of the sealing thread (seal-thread.js): a turn's seals sent, each with
 * its key's bytes (by postMessage: in memory only, in the thread's heap as in this one's, never
 * written anywhere, and zeroed there once the turn is sealed), their texts answered. The thread
 * holds no key between turns, so an erasure has nothing to tell it, and no map of the keys it
 * holds is kept here: past 50,000 constituents that map cost 3-5 µs a new one on each side (a
 * string-keyed set and an eviction a write), against 32 bytes copied a seal. It keeps the
 * process alive only while a turn is in flight.
 */
class SealThread {
  private readonly calls: ThreadCalls<string[]>;

  constructor(program: URL, stopped: (thread: SealThread, wasReady: boolean) => void) {
    this.calls = new ThreadCalls<string[]>(new Worker(program, { name: 'turnout-sealing', execArgv: THREAD_EXEC_ARGV }), {
      answer: (m) => (m.texts ? (m.texts as string).split('\n') : []),
      failed: (reason) => new Error(`the sealing thread failed: ${reason}`),
      stopped: (err) => new Error(`the sealing thread stopped (${err.message}) with this append's seal under way: nothing of it was written`),
      onStop: (_err, wasReady) => stopped(this, wasReady),
    });
  }

  /** The thread itself (the tests reach it to count its messages or end it). */
  get worker(): Worker {
    return this.calls.worker;
  }

  /** Whether the thread has started and takes turns. */
  get ready(): boolean {
    return this.calls.ready;
  }

  get busy(): boolean {
    return this.calls.busy;
  }

  /** Resolves once no turn is in flight. */
  idle(): Promise<void> {
    return this.calls.idle();
  }

  /**
   * The turn's seals in one message: their keys in one block of bytes, 32 a seal in order (copied,
   * not transferred: a transfer cost more than the copy of a few hundred bytes), and the seals as
   * one string of (stream, part, JSON) triples, NUL between each (JSON.stringify writes a NUL as
   * an escape, never raw): one string costs the main thread less to send than an array of them.
   * The texts come back in order, in one string too.
   */
  seal(work: Work[]): Promise<string[]> {
    let seals = '';
    let count = 0;
    for (const { splits } of work) for (const s of splits) count += s.plain.length / 2;
    const keys = new Uint8Array(32 * count);
    let k = 0;
    for (const { q, splits } of work) {
      for (const s of splits) {
        for (let i = 0; i < s.plain.length; i += 2) {
          q.sealer.copyKeyInto(keys, 32 * k++);
          seals += `${seals ? '\0' : ''}${q.stream}\0${s.plain[i]}\0${s.plain[i + 1]}`;
        }
      }
    }
    const sent = this.calls.call({ keys, seals });
    // postMessage copied the bytes: this thread's copy is not left for the collector to find.
    keys.fill(0);
    return sent;
  }

  /** Lets the turns in flight finish, and ends the thread. */
  close(): Promise<void> {
    return this.calls.close();
  }
}

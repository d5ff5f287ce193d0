import type { Worker } from 'node:worker_threads';
import type { SendResult, WebhookSender } from '../dispatcher/send.js';
import type { Signing } from '../dispatcher/sign.js';
import type { FromSenderThread, SenderThreadSettings, ToSenderThread } from './sender-wire.js';
import { startModuleThread } from './thread-projectors.js';

/**
 * The webhook sender on a thread of its own (the embedded dispatcher's): signing and the HTTP
 * client are about a third of the main thread's time per delivery, and that thread also serves
 * the API and the rest of the dispatcher. The main thread hands over each turn's attempts in one
 * message and gets the outcomes back the same way.
 *
 * A hop between threads is cheap on an idle machine (0.1 ms) but not on a busy one with two cores:
 * the woken thread waits for a core, which roughly doubles a steady trickle's latency from a
 * write's 2xx to the receiver. So with `here`
 * (a sender in this thread), while nothing waits on the sender thread, up to `hereUpTo` attempts at
 * a time are sent from this thread: a trickle keeps its latency, a burst gets the second core.
 *
 * Attempts in flight keep the process alive, an idle sender does not. A thread that dies answers
 * its attempts in flight as failed (they are retried as any failed attempt) and the next attempt
 * starts a new one. After close(), attempts fail at once.
 */
export class ThreadSender implements WebhookSender {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, (r: SendResult) => void>();
  private nextId = 0;
  private outbox: Array<[number, string, string, Signing]> = [];
  private closed = false;

  private booted: Promise<void> | null = null;

  private hereInFlight = 0;

  constructor(
    private readonly settings: SenderThreadSettings,
    private readonly options: { here?: WebhookSender; hereUpTo?: number } = {},
  ) {}

  /**
   * Starts the thread and resolves once it is ready to send. Attempts handed over before that wait
   * for it (their time-outs run from when the thread takes them); the dispatcher calls this at
   * start, without waiting, so the thread is loading while the rest of the process starts.
   */
  ready(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.worker ??= this.start();
    return this.booted!;
  }

  deliver(url: string, body: string, signing: Signing): Promise<SendResult> {
    if (this.closed) return Promise.resolve(failed('the webhook sender is closed'));
    const { here, hereUpTo = 0 } = this.options;
    // A trickle: nothing waits on the thread and few attempts are in flight here. Under a burst
    // the thread is busy and takes everything (attempts done here finish sooner and would otherwise
    // keep coming back here, so this thread ended up sending most of a burst).
    if (here && this.hereInFlight < hereUpTo && this.waiting.size === 0) {
      this.hereInFlight++;
      return here.deliver(url, body, signing).finally(() => this.hereInFlight--);
    }
    const worker = (this.worker ??= this.start());
    return new Promise<SendResult>((resolve) => {
      const id = this.nextId++;
      this.waiting.set(id, resolve);
      if (this.waiting.size === 1) worker.ref();
      if (!this.outbox.length) setImmediate(() => this.flush());
      this.outbox.push([id, url, body, signing]);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.options.here?.close();
    this.outbox = [];
    this.failAll('the webhook sender is closed');
    this.worker?.postMessage({ type: 'close' } satisfies ToSenderThread);
    this.worker = null;
  }

  private flush(): void {
    const attempts = this.outbox;
    this.outbox = [];
    if (attempts.length && this.worker) this.worker.postMessage({ type: 'send', attempts } satisfies ToSenderThread);
  }

  private start(): Worker {
    const worker = startThread(this.settings);
    worker.unref();
    let ready!: () => void;
    this.booted = new Promise<void>((resolve) => (ready = resolve));
    worker.once('exit', () => ready());
    worker.on('message', (m: FromSenderThread) => {
      if (m.type === 'ready') return ready();
      for (const [id, r] of m.answers) {
        const resolve = this.waiting.get(id);
        this.waiting.delete(id);
        resolve?.(r);
      }
      if (!this.waiting.size) worker.unref();
    });
    const lost = (why: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.outbox = [];
      this.failAll(why);
    };
    worker.on('error', (err) => lost(`the webhook sender's thread failed (${err.message})`));
    worker.on('exit', (code) => lost(`the webhook sender's thread exited (${code})`));
    return worker;
  }

  private failAll(why: string): void {
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const resolve of waiting) resolve(failed(why));
  }
}

const failed = (error: string): SendResult => ({ ok: false, responseStatus: null, durationMs: 0, error, retryAfter: null });

/** The sender thread (sender-thread-entry.ts), from the build or the sources. */
const startThread = (workerData: SenderThreadSettings): Worker => startModuleThread(import.meta.url, 'sender-thread-entry', { workerData, name: 'turnout-webhook-sender' });

/*
 * The webhook sender's thread (ThreadSender, sender-thread.ts): signs and POSTs each attempt the
 * main thread hands it with a Sender of its own, and answers the outcomes, a turn's worth at a
 * time.
 */
import http from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import { Sender, type SendResult } from '../dispatcher/send.js';
import type { FromSenderThread, SenderThreadSettings, ToSenderThread } from './sender-wire.js';

const WARM_UP_AFTER_MS = 1_000;

if (!parentPort) throw new Error('sender-thread-entry runs as a worker thread (sender-thread.ts)');
const port = parentPort;
const sender = new Sender(workerData as SenderThreadSettings);

let answers: Array<[number, SendResult]> = [];
const answer = (id: number, r: SendResult) => {
  if (!answers.length) {
    setImmediate(() => {
      const out = answers;
      answers = [];
      port.postMessage({ type: 'answers', answers: out } satisfies FromSenderThread);
    });
  }
  answers.push([id, r]);
};

port.on('message', (m: ToSenderThread) => {
  if (m.type === 'close') {
    sender.close();
    port.close();
    return;
  }
  for (const [id, url, body, signing] of m.attempts)
    sender.deliver(url, body, signing).then(
      (r) => answer(id, r),
      // deliver() answers every failure as a result; this is a bug's last resort, still an answer.
      (err: unknown) => answer(id, { ok: false, responseStatus: null, durationMs: 0, error: `sender failed: ${err instanceof Error ? err.message : String(err)}`, retryAfter: null }),
    );
});

port.postMessage({ type: 'ready' } satisfies FromSenderThread);
// A second after the start, not during it: the process's start (catch-up, opening the stores)
// has both cores meanwhile. Unref'd: it never keeps the process alive.
setTimeout(() => void warmUp().catch(() => undefined), WARM_UP_AFTER_MS).unref();

/**
 * This thread's code starts cold (a thread is an isolate of its own): the first few dozen
 * attempts after a start run interpreted, tens of times slower than warm ones, and would hold
 * the first real deliveries back. So once ready, it signs and sends a few hundred attempts to a
 * receiver of its own on the loopback, through a Sender of the same class (the JIT's work is per
 * function, not per instance). Real attempts arriving meanwhile go ahead beside them.
 */
async function warmUp(): Promise<void> {
  const rx = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(rx.address() as import('node:net').AddressInfo).port}/warm-up`;
  const warm = new Sender({ timeoutMs: 2_000, allowInsecure: true });
  const body = JSON.stringify({ id: 'evt_0_0', type: 'warm.up', created: 0, data: {} });
  const signing = { eventId: 'evt_0_0', eventType: 'warm.up', delivery: 'dlv_warm', secrets: ['whsec_' + Buffer.alloc(32).toString('base64')], t: 0 };
  try {
    for (let round = 0; round < 40; round++) await Promise.all(Array.from({ length: 8 }, () => warm.deliver(url, body, signing)));
  } finally {
    warm.close();
    rx.closeAllConnections();
    rx.close();
  }
}

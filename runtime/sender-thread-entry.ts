/*
 * The webhook sender's thread (ThreadSender, sender-thread.ts): signs and POSTs each attempt the
 * main thread hands it with a Sender of its own, and answers the outcomes, a turn's worth at a
 * time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Sender, type SendResult } from '../dispatcher/send.js';
import type { FromSenderThread, SenderThreadSettings, ToSenderThread } from './sender-wire.js';

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

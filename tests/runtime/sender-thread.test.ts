import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyStandardWebhook, verifyWebhook } from '../../packages/webhooks-verify/index.js';
import { Sender } from '../../dispatcher/send.js';
import { ThreadSender } from '../../runtime/sender-thread.js';
import { startReceiver, type Receiver } from '../dispatcher/support.js';

const secret = 'whsec_' + Buffer.from('a thirty-two byte signing secret').toString('base64');
const signing = (delivery: string, t = Math.floor(Date.now() / 1000)) => ({ eventId: 'evt_1_7', eventType: 'constituent.created', delivery, secrets: [secret], t });
const body = JSON.stringify({ id: 'evt_1_7', type: 'constituent.created', data: { PkConstituent: 7 } });

/** The same attempts through the thread and in this thread answer alike (the dispatcher's sender on a thread of its own, issue 16). */
describe('the webhook sender on its own thread', () => {
  let rx: Receiver;
  let sender: ThreadSender;
  beforeAll(async () => {
    rx = await startReceiver();
    sender = new ThreadSender({ timeoutMs: 500, allowInsecure: true });
    await sender.ready();
  });
  afterAll(async () => {
    sender.close();
    await rx.close();
  });

  it('signs each attempt with both header sets, as the in-thread sender does', async () => {
    const r = await sender.deliver(rx.url('/ok'), body, signing('dlv_a'));
    expect(r).toMatchObject({ ok: true, responseStatus: 200, error: null });
    const [got] = rx.on('/ok');
    expect(got.raw).toBe(body);
    expect(got.headers['x-turnout-event']).toBe('constituent.created');
    expect(got.headers['x-turnout-delivery']).toBe('dlv_a');
    expect(verifyWebhook({ rawBody: got.raw, header: got.headers['x-turnout-signature'], secret })).toBe(true);
    expect(verifyStandardWebhook({ rawBody: got.raw, headers: got.headers, secret })).toBe(true);
    const here = new Sender({ timeoutMs: 500, allowInsecure: true });
    try {
      const t = Math.floor(Date.now() / 1000);
      await here.deliver(rx.url('/here'), body, signing('dlv_a', t));
      await sender.deliver(rx.url('/there'), body, signing('dlv_a', t));
      const [a, b] = [rx.on('/here')[0].headers, rx.on('/there')[0].headers];
      for (const h of ['x-turnout-signature', 'webhook-signature', 'webhook-id', 'webhook-timestamp']) expect(b[h]).toBe(a[h]);
    } finally {
      here.close();
    }
  });

  it('sends the traceparent made on the main thread (tracing on), and none when the attempt has none', async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await sender.deliver(rx.url('/traced'), body, { ...signing('dlv_t'), traceparent });
    await sender.deliver(rx.url('/untraced'), body, signing('dlv_u'));
    expect(rx.on('/traced')[0].headers.traceparent).toBe(traceparent);
    expect(rx.on('/untraced')[0].headers.traceparent).toBeUndefined();
  });

  it('answers many attempts of one turn, each with its own outcome', async () => {
    rx.behave('/odd', (n) => (n % 2 ? { status: 503, headers: { 'retry-after': '7' } } : { status: 204 }));
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => sender.deliver(rx.url('/odd'), body, signing(`dlv_${i}`))));
    expect(rx.on('/odd')).toHaveLength(40);
    expect(results.filter((r) => r.ok)).toHaveLength(20);
    for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ responseStatus: 503, error: 'receiver answered 503', retryAfter: '7' });
  });

  it('reports time-outs, refused connections and unsafe URLs in words', async () => {
    rx.behave('/hang', () => ({ hang: true }));
    const hung = await sender.deliver(rx.url('/hang'), body, signing('dlv_h'));
    expect(hung).toMatchObject({ ok: false, responseStatus: null, error: 'timed out after 500 ms' });
    expect(hung.durationMs).toBeGreaterThanOrEqual(450);
    const closed = await sender.deliver('http://127.0.0.1:1/hook', body, signing('dlv_c'));
    expect(closed.ok).toBe(false);
    expect(closed.error).toMatch(/^connection failed: .*ECONNREFUSED/);
    const strict = new ThreadSender({ timeoutMs: 500, allowInsecure: false });
    try {
      const unsafe = await strict.deliver('https://127.0.0.1/hook', body, signing('dlv_u'));
      expect(unsafe).toMatchObject({ ok: false, responseStatus: null });
      expect(unsafe.error).toMatch(/not a public address/);
    } finally {
      strict.close();
    }
  });

  it('fails what is in flight when the thread dies, and starts a new one for the next attempt', async () => {
    const own = new ThreadSender({ timeoutMs: 5000, allowInsecure: true });
    try {
      await own.ready();
      rx.behave('/slow', () => ({ hang: true }));
      const inFlight = own.deliver(rx.url('/slow'), body, signing('dlv_s'));
      await rx.waitFor((r) => r.path === '/slow');
      // The thread ends as a crash would.
      await (own as unknown as { worker: import('node:worker_threads').Worker }).worker.terminate();
      expect(await inFlight).toMatchObject({ ok: false, responseStatus: null, error: expect.stringMatching(/thread exited/) });
      expect(await own.deliver(rx.url('/after'), body, signing('dlv_n'))).toMatchObject({ ok: true, responseStatus: 200 });
    } finally {
      own.close();
    }
  });

  it('sends a trickle from this thread (up to hereUpTo at a time, while nothing waits on its own), a burst from its own', async () => {
    let here = 0;
    let peak = 0;
    let sentHere = 0;
    let closed = false;
    const local = new Sender({ timeoutMs: 500, allowInsecure: true });
    const counting = {
      deliver: async (url: string, b: string, s: ReturnType<typeof signing>) => {
        peak = Math.max(peak, ++here);
        sentHere++;
        try {
          return await local.deliver(url, b, s);
        } finally {
          here--;
        }
      },
      close: () => {
        closed = true;
        local.close();
      },
    };
    const split = new ThreadSender({ timeoutMs: 500, allowInsecure: true }, { here: counting, hereUpTo: 2 });
    try {
      await split.ready();
      rx.behave('/split', () => ({ status: 204 }));
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => split.deliver(rx.url('/split'), body, signing(`dlv_split_${i}`))));
      expect(results.every((r) => r.ok)).toBe(true);
      expect(rx.on('/split')).toHaveLength(12);
      // Two went from here; once the thread had attempts waiting, the rest went there.
      expect(peak).toBe(2);
      expect(sentHere).toBe(2);
      // One at a time, with nothing waiting on the thread, each goes from here.
      for (let i = 0; i < 3; i++) await split.deliver(rx.url('/split'), body, signing(`dlv_one_${i}`));
      expect(sentHere).toBe(5);
    } finally {
      split.close();
    }
    expect(closed).toBe(true);
  });

  it('fails at once after close, and lets the process exit with nothing in flight', async () => {
    const own = new ThreadSender({ timeoutMs: 500, allowInsecure: true });
    await own.ready();
    own.close();
    expect(await own.deliver(rx.url('/late'), body, signing('dlv_l'))).toMatchObject({ ok: false, error: 'the webhook sender is closed' });
    expect(rx.on('/late')).toHaveLength(0);
  });
});

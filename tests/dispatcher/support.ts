import http from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import { type Config, testConfig } from '../../runtime/config.js';
import { startDispatcher } from '../../runtime/webhooks.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type NatsServer, startNats } from '../support/nats.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  json: any;
  n: number;
  at: number;
}

/** A local webhook receiver; `behave(path, fn)` decides how a path answers its n-th request. */
export async function startReceiver() {
  const got: Received[] = [];
  const counts = new Map<string, number>();
  const behaviour = new Map<string, (n: number, r: Received) => { status?: number; hang?: boolean; headers?: Record<string, string>; body?: string }>();
  const waiters = new Set<() => void>();
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const n = (counts.get(req.url!) ?? 0) + 1;
      counts.set(req.url!, n);
      let json: unknown = null;
      try {
        json = JSON.parse(raw);
      } catch {
        /* not JSON */
      }
      const r: Received = { path: req.url!, headers: req.headers, raw, json, n, at: Date.now() };
      got.push(r);
      for (const w of waiters) w();
      const b = behaviour.get(req.url!)?.(n, r) ?? {};
      if (b.hang) return; // never answers: the sender's time-out must end it
      res.writeHead(b.status ?? 200, { 'content-type': 'text/plain', ...b.headers });
      res.end(b.body ?? 'ok');
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}`;
  return {
    base,
    got,
    url: (p: string) => base + p,
    behave: (p: string, fn: (n: number, r: Received) => { status?: number; hang?: boolean; headers?: Record<string, string>; body?: string }) => behaviour.set(p, fn),
    on: (p: string) => got.filter((g) => g.path === p),
    /**
     * The envelopes received at `p`, one per envelope id in order of first arrival: delivery is
     * at least once (an attempt timed out is sent again), and receivers de-duplicate on the id.
     */
    distinct: (p: string): any[] => [...new Map(got.filter((g) => g.path === p).map((g) => [(g.json as { id: string }).id, g.json])).values()],
    /** Resolves once `pred` holds for `count` requests; rejects after the time-out. */
    async waitFor(pred: (r: Received) => boolean, count = 1, timeoutMs = 8000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hits = got.filter(pred);
        if (hits.length >= count) return hits;
        if (Date.now() > deadline) throw new Error(`expected ${count} matching deliveries within ${timeoutMs} ms, got ${hits.length}: ${got.map((g) => `${g.path} ${g.json?.type}`).join(', ')}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, 50);
          waiters.add(() => {
            clearTimeout(t);
            r();
          });
        });
        waiters.clear();
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Retries shrunk to milliseconds (svix-style tests). The attempt time-out stays at 2 s: the test
 * receiver answers from the test's own event loop, which a loaded CI machine can stall for
 * hundreds of milliseconds while the sender thread's clock runs on, and a time-out there sends
 * the envelope again. A test of time-outs shortens it.
 */
export const fastWebhooks = (over: Partial<Config['webhook']> = {}): Config['webhook'] => ({
  allowInsecure: true,
  retryBaseMs: 20,
  retryMaxMs: 80,
  maxAttempts: 3,
  timeoutMs: 2000,
  ...over,
});

/**
 * The product with the dispatcher running, as role 'all' starts it: on embedded stores, or with
 * its delivery queue in the NATS JetStream at `natsUrl`.
 */
export async function startWebhookApp(webhook = fastWebhooks(), natsUrl?: string): Promise<TestApp & { config: Config }> {
  const t = await startTestApp({ webhook, natsUrl });
  const config = testConfig({ webhook });
  await startDispatcher(t.runtime.services.config, t.runtime, { report: () => undefined });
  return { ...t, config };
}

export type WebhookApp = Awaited<ReturnType<typeof startWebhookApp>>;

/**
 * A webhook app and a receiver for the tests of one file: started before them (and handed to
 * `take`), stopped after them. With `nats`, the delivery queue is in a NATS server of the file's
 * own, stopped last.
 */
export function useWebhookApp(take: (app: WebhookApp, receiver: Receiver) => void, options: { webhook?: Config['webhook']; nats?: boolean } = {}): void {
  let app: WebhookApp | undefined;
  let receiver: Receiver | undefined;
  let nats: NatsServer | undefined;
  beforeAll(async () => {
    if (options.nats) nats = await startNats();
    app = await startWebhookApp(options.webhook, nats?.url);
    receiver = await startReceiver();
    take(app, receiver);
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
    await nats?.stop();
  });
}

/** Waits for a condition, polling; never a fixed sleep. */
export async function until<T>(fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 8000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

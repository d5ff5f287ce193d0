import { EventEmitter } from 'node:events';
import type { Agent } from 'undici';
import { deliveryHeaders, type Signing } from './sign.js';
import { parseEndpointUrl, safeLookup, type Lookup, UnsafeUrlError } from './ssrf.js';

export interface SendResult {
  ok: boolean;
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
  /** The receiver's Retry-After header, as sent (decisions.md 12: back-pressure on 429 and 503). */
  retryAfter: string | null;
}

/**
 * What delivers a webhook attempt: signs it (sign.ts deliveryHeaders) and POSTs it. The worker
 * and the operations take any; the composition root gives them the Sender below, in this
 * thread or on a thread of its own.
 */
export interface WebhookSender {
  deliver(url: string, body: string, signing: Signing): Promise<SendResult>;
  close(): void;
}

export interface SenderOptions {
  timeoutMs: number;
  allowInsecure: boolean;
  /** DNS for the SSRF check (tests substitute their own). */
  lookup?: Lookup;
  /** How much of a receiver's answer is read: enough to keep the connection, never a flood. */
  maxResponseBytes?: number;
}

/**
 * One HTTP POST of a webhook (spec 6.6): any 2xx is success; a non-2xx, a redirect (never
 * followed) and a time-out are failures. Connections are kept alive per origin. Unless insecure
 * mode is on, the URL is judged again on every send (DNS can change since the endpoint was
 * saved) and the sockets resolve names through the SSRF guard, so the address checked is the
 * one connected to.
 *
 * The client is undici's (the one Node's own fetch is built on), not node:http: a POST costs it
 * about 80 µs of CPU against about 140 µs (a keep-alive loop of 20,000 to a local receiver, three
 * rounds each), and the sender is a third or more of the CPU a delivery takes. The saving holds
 * only without per-attempt overhead: no AbortController and no URL parsed per attempt.
 */
export class Sender implements WebhookSender {
  /** Made with the first attempt: undici is loaded then, not at the process's start (decisions.md §13). */
  private agent: Agent | null = null;
  private agentMade: Promise<Agent> | null = null;
  private readonly maxBytes: number;

  constructor(private readonly options: SenderOptions) {
    this.maxBytes = options.maxResponseBytes ?? 4096;
  }

  private makeAgent(): Promise<Agent> {
    return (this.agentMade ??= import('undici').then(({ Agent }) => {
      const lookup = this.options.allowInsecure ? undefined : safeLookup(this.options.lookup);
      return (this.agent = new Agent({
        // As many connections per origin as can be busy (the worker's concurrency): with fewer, a
        // burst to one receiver waits for them.
        connections: 64,
        // The attempt's own timer (below) bounds connecting, the answer and its body together.
        headersTimeout: 0,
        bodyTimeout: 0,
        connect: { ...(lookup ? { lookup } : {}), timeout: this.options.timeoutMs + 1000 },
      }));
    }));
  }

  deliver(url: string, body: string, signing: Signing): Promise<SendResult> {
    const headers = deliveryHeaders(body, signing);
    if (signing.traceparent) headers.traceparent = signing.traceparent;
    return this.send(url, body, headers);
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    // Before the clock starts: the first attempt's time is its own, not undici's loading.
    const agent = this.agent ?? (await this.makeAgent());
    const started = performance.now();
    const result = (r: Omit<SendResult, 'durationMs' | 'retryAfter'>, retryAfter: string | null = null): SendResult => ({
      ...r,
      durationMs: Math.round(performance.now() - started),
      retryAfter,
    });
    let target: { origin: string; path: string };
    try {
      target = this.target(url);
    } catch (err) {
      return result({ ok: false, responseStatus: null, error: err instanceof Error ? err.message : String(err) });
    }
    // An emitter is undici's cheaper signal (an AbortController is an EventTarget, which cost
    // as much per attempt as the client saved).
    const abort = new EventEmitter();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      abort.emit('abort');
    }, this.options.timeoutMs);
    try {
      const res = await agent.request({
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Turnout-Webhooks/1' },
        body,
        signal: abort,
      });
      const status = res.statusCode;
      const header = (name: string) => {
        const v = res.headers[name];
        return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
      };
      const retryAfter = header('retry-after');
      // Enough of the answer is read to keep the connection; past the cap the rest is not
      // wanted, and leaving the loop drops the connection rather than read a flood.
      let read = 0;
      for await (const chunk of res.body) {
        read += (chunk as Buffer).length;
        if (read > this.maxBytes) break;
      }
      if (status >= 200 && status < 300) return result({ ok: true, responseStatus: status, error: null }, retryAfter);
      if (status >= 300 && status < 400) {
        const location = header('location');
        return result({ ok: false, responseStatus: status, error: `redirect (${status}${location ? ` to ${location}` : ''}) not followed` }, retryAfter);
      }
      return result({ ok: false, responseStatus: status, error: `receiver answered ${status}` }, retryAfter);
    } catch (err) {
      if (timedOut) return result({ ok: false, responseStatus: null, error: `timed out after ${this.options.timeoutMs} ms` });
      // undici hands on the SSRF guard's error from the socket's lookup as it is.
      if (err instanceof UnsafeUrlError) return result({ ok: false, responseStatus: null, error: `refused: ${err.message}` });
      return result({ ok: false, responseStatus: null, error: `connection failed: ${err instanceof Error ? err.message : String(err)}` });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The URL judged (parseEndpointUrl: the same string always gets the same verdict) and split
   * for the client, kept for the endpoints in use: parsing a URL cost more than signing.
   */
  private target(url: string): { origin: string; path: string } {
    let t = this.targets.get(url);
    if (!t) {
      const u = parseEndpointUrl(url, { allowInsecure: this.options.allowInsecure });
      if (this.targets.size >= 1_000) this.targets.clear();
      this.targets.set(url, (t = { origin: u.origin, path: u.pathname + u.search }));
    }
    return t;
  }

  private readonly targets = new Map<string, { origin: string; path: string }>();

  close(): void {
    this.agentMade?.then((agent) => agent.destroy()).catch(() => {});
  }
}

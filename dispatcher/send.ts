import http from 'node:http';
import https from 'node:https';
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
 */
export class Sender implements WebhookSender {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly maxBytes: number;

  constructor(private readonly options: SenderOptions) {
    const lookup = options.allowInsecure ? undefined : (safeLookup(options.lookup) as never);
    // As many idle connections are kept as can be busy (the worker's concurrency): with fewer, a
    // burst to one receiver ends by closing and later reopening most of them.
    const common = { keepAlive: true, maxSockets: 64, maxFreeSockets: 64, timeout: options.timeoutMs + 1000, lookup };
    this.httpAgent = new http.Agent(common);
    this.httpsAgent = new https.Agent(common);
    this.maxBytes = options.maxResponseBytes ?? 4096;
  }

  deliver(url: string, body: string, signing: Signing): Promise<SendResult> {
    return this.send(url, body, deliveryHeaders(body, signing));
  }

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    let target: URL;
    try {
      target = parseEndpointUrl(url, { allowInsecure: this.options.allowInsecure });
    } catch (err) {
      return { ok: false, responseStatus: null, durationMs: took(), error: err instanceof Error ? err.message : String(err), retryAfter: null };
    }
    const lib = target.protocol === 'https:' ? https : http;
    const agent = target.protocol === 'https:' ? this.httpsAgent : this.httpAgent;
    return new Promise<SendResult>((resolve) => {
      let settled = false;
      let retryAfter: string | null = null;
      const finish = (r: Omit<SendResult, 'durationMs' | 'retryAfter'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ ...r, durationMs: took(), retryAfter });
      };
      const req = lib.request(
        target,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Turnout-Webhooks/1' },
        },
        (res) => {
          const status = res.statusCode ?? 0;
          retryAfter = typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : null;
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            // Past the cap the rest is not wanted: drop the connection rather than read a flood.
            if (read > this.maxBytes) res.destroy();
          });
          const done = () => {
            if (status >= 200 && status < 300) finish({ ok: true, responseStatus: status, error: null });
            else if (status >= 300 && status < 400)
              finish({ ok: false, responseStatus: status, error: `redirect (${status}${res.headers.location ? ` to ${res.headers.location}` : ''}) not followed` });
            else finish({ ok: false, responseStatus: status, error: `receiver answered ${status}` });
          };
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      const timer = setTimeout(() => {
        finish({ ok: false, responseStatus: null, error: `timed out after ${this.options.timeoutMs} ms` });
        req.destroy();
      }, this.options.timeoutMs);
      req.on('error', (err) =>
        finish({ ok: false, responseStatus: null, error: err instanceof UnsafeUrlError ? `refused: ${err.message}` : `connection failed: ${err.message}` }),
      );
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

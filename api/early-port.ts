import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConnectionLimits } from '../runtime/config.js';
import { createLimitedServer } from './transport.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
export type Readiness = () => Promise<{ code: number; body: unknown }>;
/** GET /metrics of a process without the app (a background role): its exposition, behind the admin token. */
export interface Scrape {
  token: string;
  contentType: string;
  text: () => Promise<string>;
}

/**
 * The HTTP port, opened before the server has loaded its modules and built its routes (which
 * takes seconds on a busy machine), so that /healthz answers within a second of `npm start`.
 * Until a handler is given it answers the probes itself (/readyz: not ready, or what `probes`
 * says) and holds every other request, which the handler then serves.
 */
export class EarlyPort {
  private handler: Handler | null = null;
  private readiness: Readiness = async () => ({ code: 503, body: { status: 'not_ready', followers: [] } });
  private held: Array<[IncomingMessage, ServerResponse]> = [];
  private scrape: Scrape | null = null;
  readonly server: Server;

  private constructor(limits: ConnectionLimits) {
    // Time-outs, the connection cap and transport errors in the contract's shape from the first byte.
    this.server = createLimitedServer(limits, (req, res) => (this.handler ? this.handler(req, res) : this.early(req, res)));
  }

  static async open(port: number, host: string, limits: ConnectionLimits): Promise<EarlyPort> {
    const p = new EarlyPort(limits);
    await new Promise<void>((resolve, reject) => {
      p.server.once('error', reject);
      p.server.listen(port, host, () => resolve());
    });
    return p;
  }

  get address(): string {
    const a = this.server.address() as AddressInfo;
    return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  /** What /readyz answers until the handler takes over (a background role's, for good). */
  probes(readiness: Readiness, scrape?: Scrape | null): void {
    this.readiness = readiness;
    this.scrape = scrape ?? null;
  }

  /** Hands every request, the held ones first, to `handler` (the built app). */
  serve(handler: Handler): void {
    this.handler = handler;
    for (const [req, res] of this.held.splice(0)) handler(req, res);
  }

  private closing: Promise<void> | null = null;

  /** Stops taking requests (held ones are dropped); the same promise however often it is called. */
  close(): Promise<void> {
    for (const [, res] of this.held.splice(0)) res.destroy();
    return (this.closing ??= new Promise((resolve) => this.server.close(() => resolve())));
  }

  private early(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/healthz') return send(res, 200, { status: 'ok' });
    if (req.method === 'GET' && path === '/readyz') {
      this.readiness().then(
        (r) => send(res, r.code, r.body),
        () => send(res, 503, { status: 'not_ready', followers: [] }),
      );
      return;
    }
    // A projector or dispatcher process serves its own metrics (decisions.md §15) from here.
    if (req.method === 'GET' && path === '/metrics' && this.scrape) return void scrapeMetrics(this.scrape, req, res);
    this.held.push([req, res]);
  }
}

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const digest = (s: string) => createHash('sha256').update(s).digest();

async function scrapeMetrics(scrape: Scrape, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!m || !timingSafeEqual(digest(m[1]), digest(scrape.token)))
    return send(res, 401, { error: { code: 'unauthorized', message: 'Send the admin token as "Authorization: Bearer <token>".' } });
  try {
    const text = await scrape.text();
    res.writeHead(200, { 'content-type': scrape.contentType, 'content-length': Buffer.byteLength(text) });
    res.end(text);
  } catch {
    send(res, 500, { error: { code: 'internal_error', message: 'Something went wrong on our side; it has been logged. Retry later.' } });
  }
}

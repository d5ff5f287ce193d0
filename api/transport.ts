import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { ConnectionLimits } from '../runtime/config.js';

/**
 * decisions.md §4, transport errors: the same {error: {code, message}} shape as every other
 * error, whether Fastify or Node's HTTP parser answers. A body over the limit stays
 * `413 payload_too_large` (api/errors.ts): integration-api.md §7 names it so, and it wins over
 * decisions.md's `body_too_large` for the public API.
 */
export const TRANSPORT_STATUS = {
  invalid_request: 400,
  request_timeout: 408,
  uri_too_long: 414,
  unsupported_media_type: 415,
  expectation_failed: 417,
  headers_too_large: 431,
} as const;
export type TransportCode = keyof typeof TRANSPORT_STATUS;

export const transportError = (code: TransportCode, message: string) => ({ error: { code, message } });

/**
 * What the HTTP edge refuses before any rule of the domain applies: the transport's own codes, a
 * body that is not JSON or is too large, a missing or refused credential, a rate limit. The same
 * {code, message, field} shape as a DomainError; api/errors.ts maps both to their statuses.
 */
export type EdgeCode = TransportCode | 'invalid_json' | 'payload_too_large' | 'unauthorized' | 'insufficient_scope' | 'rate_limited';

export class TransportError extends Error {
  constructor(
    readonly code: EdgeCode,
    message: string,
    readonly field?: string,
  ) {
    super(message);
    this.name = 'TransportError';
  }
}

/** HTTP/1.1 requires a Host header (RFC 9112 §3.2): a request without one is 400 invalid_request, in the contract's shape. */
// A callback hook: every request passes it, and an async one would make a promise for each.
export function refuseNoHost(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (request.headers.host === undefined && request.raw.httpVersion === '1.1')
    return done(new TransportError('invalid_request', 'The request has no Host header, which HTTP/1.1 requires; send one (such as Host: api.example.org).'));
  done();
}

function parserAnswer(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): { code: TransportCode; message: string } {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return { code: 'request_timeout', message: 'The request did not arrive in time; send the headers and body promptly.' };
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    // Node counts the request line with the headers (16 KB in all); when the request line is
    // the bulk of it, the URL is what is too long.
    const raw = err.rawPacket?.toString('latin1') ?? '';
    const lineEnd = raw.indexOf('\r\n');
    if ((lineEnd < 0 ? raw.length : lineEnd) > http.maxHeaderSize / 2) return { code: 'uri_too_long', message: 'The URL is too long; keep the URL and headers under 16 KB.' };
    return { code: 'headers_too_large', message: 'The request headers are over 16 KB; send fewer or shorter headers.' };
  }
  return { code: 'invalid_request', message: 'The request is not valid HTTP/1.1; check the request line and headers.' };
}

const answered = new WeakSet<Socket>();

/**
 * Node's HTTP parser refuses malformed requests, oversized headers and slow clients before
 * Fastify sees them; answer those in the contract's shape too, then close the socket.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // The port opened before the app (early-port.ts) and the app may both listen for client errors
  // on one server while the app is being built: a socket is answered once.
  if (answered.has(socket)) return;
  answered.add(socket);
  if (!socket.writable) return void socket.destroy();
  const { code, message } = parserAnswer(err);
  const body = JSON.stringify(transportError(code, message));
  const status = TRANSPORT_STATUS[code];
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/**
 * Fastify's server options from the configured limits. Node checks the header and request
 * time-outs on a timer (30 s by default, which would let an idle socket live that much longer).
 */
export function serverOptions(c: ConnectionLimits) {
  return {
    connectionTimeout: c.idleTimeoutMs,
    keepAliveTimeout: c.keepAliveTimeoutMs,
    requestTimeout: c.requestTimeoutMs,
    http: {
      headersTimeout: c.headersTimeoutMs,
      requestTimeout: c.requestTimeoutMs,
      keepAliveTimeout: c.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(c.headersTimeoutMs / 4))),
      // Node would answer an HTTP/1.1 request without a Host header 400 with no body; refuseNoHost
      // answers it in the contract's shape instead.
      requireHostHeader: false,
    },
    clientErrorHandler,
  };
}

/** A plain Node server with the limits Fastify would give its own (for a server made before the app). */
export function createLimitedServer(c: ConnectionLimits, handler: http.RequestListener): http.Server {
  const o = serverOptions(c);
  const server = http.createServer({ ...o.http }, handler);
  server.setTimeout(o.connectionTimeout);
  server.on('clientError', clientErrorHandler);
  hardenServer(server, c);
  return server;
}

/** What the server needs beyond Fastify's options: the connection cap, half-closed clients, Expect. */
export function hardenServer(server: http.Server, c: ConnectionLimits): void {
  server.maxConnections = c.maxConnections;
  // A client may end its side once its body is sent (a half-closed POST). Node's default aborts
  // the request then and drops the answer although the handler still runs and writes: keep the
  // socket open for writing so the answer is delivered, then close it.
  // (Node reads `httpAllowHalfOpen` in its socket 'end' handler; @types/node does not declare it.)
  (server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // `Expect: 100-continue` is answered by Node as HTTP/1.1 asks; any other expectation cannot be met.
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = JSON.stringify(transportError('expectation_failed', `The server cannot meet "Expect: ${req.headers.expect}"; send the request without it.`));
    res.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

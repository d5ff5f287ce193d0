import type { FastifyRequest } from 'fastify';
import type { LogLevel } from '../runtime/config.js';

const REDACTED = '[REDACTED]';
/** Query parameters that carry a credential, whatever their value looks like. */
const SECRET_PARAM = /^(api[_-]?key|key|token|access[_-]?token|auth|authorization|bearer|secret|password|admin[_-]?token)$/i;
/** Our API keys (`tko_<prefix>_<secret>`) and admin tokens (`adm_...`), wherever they stand. */
const SECRET_VALUE = /(tko|adm)_[A-Za-z0-9_-]+/gi;

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

/**
 * The URL as logged: a client that puts its key in the query string (`?api_key=`) or the path
 * still must not leave it in the request log, which is kept and shipped far more widely than the
 * key store.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const pathPart = q < 0 ? url : url.slice(0, q);
  const redactedPath = pathPart.replace(SECRET_VALUE, (_m, kind: string) => `${kind}_${REDACTED}`);
  if (q < 0) return redactedPath;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair.replace(SECRET_VALUE, (_m, kind: string) => `${kind}_${REDACTED}`);
      const name = pair.slice(0, eq);
      if (SECRET_PARAM.test(decodeName(name))) return `${name}=${REDACTED}`;
      return `${name}=${pair.slice(eq + 1).replace(SECRET_VALUE, (_m, kind: string) => `${kind}_${REDACTED}`)}`;
    })
    .join('&');
  return `${redactedPath}?${query}`;
}

/**
 * What a request log line says about the request: never a header (the Authorization header
 * carries the key), and the URL with its credentials redacted.
 */
function serializeRequest(req: FastifyRequest) {
  return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
}

/**
 * The Fastify logger options every app uses. The default level is `warn`: start-up lines go to
 * the console, and a request is logged only when LOG_LEVEL is `info` or finer (one line when it
 * arrives, one when it is answered).
 */
export function loggerOptions(options: { level?: LogLevel; stream?: NodeJS.WritableStream } = {}) {
  return {
    level: options.level ?? 'warn',
    serializers: { req: serializeRequest },
    // Belt and braces: whatever logs a request or its headers, the credentials stay out.
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'req.headers.cookie'], censor: REDACTED },
    // process.stdout rather than pino's own file descriptor writer, so survivePipeErrors covers it.
    stream: options.stream ?? process.stdout,
  };
}

/**
 * Writing to a closed stdout or stderr (the reader of a pipe has gone) fails with EPIPE, emitted
 * as an 'error' event: unheard, it would crash the process mid-shutdown. The output is lost
 * either way; the process carries on, and SIGTERM still closes it cleanly.
 */
export function survivePipeErrors(): void {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
}

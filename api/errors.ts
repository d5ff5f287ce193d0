import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../domain/shared/errors.js';
import { type AjvError, fromValidation } from '../validation/errors.js';
import { writePending } from './write-pending.js';
import { type EdgeCode, TRANSPORT_STATUS, type TransportCode, TransportError, transportError } from './transport.js';

/** Spec section 7: one place maps codes to statuses. */
export const STATUS: Record<ErrorCode, number> = {
  invalid_field: 400,
  missing_field: 400,
  unknown_field: 400,
  invalid_json: 400,
  unauthorized: 401,
  insufficient_scope: 403,
  record_protected: 403,
  not_found: 404,
  ambiguous_match: 409,
  not_open: 409,
  task_busy: 409,
  precondition_failed: 412,
  idempotency_key_reused: 422,
  idempotency_key_in_progress: 409,
  payload_too_large: 413,
  rate_limited: 429,
  not_supported: 501,
  erasure_pending: 503,
  write_pending: 503,
  record_busy: 503,
};

export const ERROR_CODES = Object.keys(STATUS) as ErrorCode[];

const statusOf = (code: ErrorCode | EdgeCode): number => (code in TRANSPORT_STATUS ? TRANSPORT_STATUS[code as TransportCode] : STATUS[code as ErrorCode]);

/** The `error` of the spec's error shape; a batch item's result carries the same (api/routes/batch.ts). */
export function errorOf(e: DomainError | TransportError): { code: string; message: string; field?: string } {
  const error: { code: string; message: string; field?: string } = { code: e.code, message: e.message };
  // An empty name is still a name ({"": 1} is an unknown field called "").
  if (e.field !== undefined) error.field = e.field;
  return error;
}

/** An error's HTTP status. */
export const httpStatus = (e: DomainError | TransportError): number => statusOf(e.code);

export function sendError(reply: FastifyReply, e: DomainError | TransportError): FastifyReply {
  return reply.code(statusOf(e.code)).send({ error: errorOf(e) });
}

/** A body limit as people write it: 64 KB, 16 MiB. */
const limitText = (bytes: number | undefined) => (bytes && bytes >= 1 << 20 ? `${bytes / (1 << 20)} MiB` : `${Math.round((bytes ?? 65536) / 1024)} KB`);

/** An unknown path. /api/v1 and /admin/v1 set it again inside their plugins, so their own auth hooks run first. */
export const notFoundHandler = (request: FastifyRequest, reply: FastifyReply) =>
  sendError(reply, new DomainError('not_found', `No such resource: ${request.method} ${request.url.split('?')[0]}.`));

/** Failures found by Fastify's router before any route, hook or error handler runs. */
export function frameworkErrors(err: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendError(reply, new TransportError('uri_too_long', 'A path parameter is over 100 characters; no id or name here is that long.'));
    return;
  }
  if (err.code === 'FST_ERR_BAD_URL') {
    sendError(reply, new TransportError('invalid_request', 'The URL path has an invalid percent-encoding (a "%" must start a UTF-8 byte as two hex digits).'));
    return;
  }
  sendError(reply, new TransportError('invalid_request', 'The request could not be routed; check its method and URL.'));
}

/** One error handler: every error answers {error: {code, message, field}}; a 5xx never shows its internal message. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((thrown: FastifyError & { validation?: AjvError[]; validationContext?: string }, request, reply) => {
    // A wait for the read models that gave up after the write committed answers as a DomainError.
    const err = writePending(thrown, request) ?? thrown;
    if (err instanceof DomainError && err.retryAfterSeconds !== undefined) reply.header('Retry-After', String(err.retryAfterSeconds));
    if (err instanceof DomainError || err instanceof TransportError) return sendError(reply, err);
    if (err.validation) return sendError(reply, fromValidation(err.validation, err.validationContext ?? 'body'));
    switch (err.code) {
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendError(reply, new TransportError('invalid_json', 'The body is empty; send a JSON object.'));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        // integration-api.md §7 names it payload_too_large; it wins over decisions.md's body_too_large.
        return sendError(reply, new TransportError('payload_too_large', `The body is over ${limitText(request.routeOptions.bodyLimit)}; send less.`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendError(reply, new TransportError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(reply, new TransportError('invalid_request', 'The Content-Length header does not match the body sent.'));
    }
    if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message)))
      return sendError(reply, new TransportError('invalid_json', 'The body is not valid JSON; check its syntax.'));
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      const code = (Object.keys(TRANSPORT_STATUS) as TransportCode[]).find((c) => TRANSPORT_STATUS[c] === err.statusCode) ?? 'invalid_request';
      return reply.code(err.statusCode).send(transportError(code, err.message));
    }
    request.log.error({ err }, 'request failed');
    return reply.code(500).send({ error: { code: 'internal_error', message: 'Something went wrong on our side; it has been logged. Retry later.' } });
  });
  app.setNotFoundHandler(notFoundHandler);
}

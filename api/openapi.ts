import { STATUS } from './errors.js';

/**
 * The OpenAPI document's frame, and what every operation gets on top of its route schema: an
 * operationId, a description of each answer with the error codes it can carry, and the headers it
 * sends. Done here, over the generated document, so no route can be left without them;
 * tests/api/openapi.lint.test.ts runs Redocly's linter on the result.
 */
export const OPENAPI_FRAME = {
  openapi: '3.1.0',
  info: {
    title: 'Turnout integration API',
    version: '1.0.0',
    description:
      'Constituents, volunteers, volunteer tasks, events and ticket sales. Authenticate with "Authorization: Bearer <API key>". ' +
      'Every error answers {"error": {"code", "message", "field"}}; bad input writes nothing.',
  },
  servers: [{ url: 'http://127.0.0.1:3000', description: 'A Turnout on its default HOST and PORT; the paths carry /api/v1' }],
  components: {
    securitySchemes: {
      bearer: { type: 'http' as const, scheme: 'bearer', bearerFormat: 'tko_<prefix>_<secret>', description: 'An API key, made by a team admin (POST /admin/v1/teams/{teamId}/api-keys)' },
    },
    headers: {
      'RateLimit-Limit': header('The requests this key may make in the window that is closest to its limit.'),
      'RateLimit-Remaining': header('The requests left in that window.'),
      'RateLimit-Reset': header('Seconds until that window has room again.'),
      'RateLimit-Policy': { description: 'The key\'s limits, e.g. `15;w=1, 600;w=60` (per second and per minute).', schema: { type: 'string' as const } },
      'Retry-After': header('Whole seconds to wait before retrying.'),
    },
  },
  security: [{ bearer: [] }],
};

function header(description: string) {
  return { description, schema: { type: 'integer' as const, minimum: 0 } };
}

const REASON: Record<number, string> = {
  400: 'Bad request',
  401: 'No valid API key',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Conflict',
  413: 'Body too large',
  429: 'Rate limited',
};

/** Which error codes answer with each status (api/errors.ts STATUS). */
function codesOf(status: number): string[] {
  return Object.entries(STATUS)
    .filter(([, s]) => s === status)
    .map(([code]) => code);
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
/** Sent once the key is known, whenever rate limits are configured (decisions.md 4). */
const RATE_LIMIT_HEADERS = { 'RateLimit-Limit': ref('RateLimit-Limit'), 'RateLimit-Remaining': ref('RateLimit-Remaining'), 'RateLimit-Reset': ref('RateLimit-Reset'), 'RateLimit-Policy': ref('RateLimit-Policy') };

/** `GET /api/v1/volunteer-tasks/{id}` -> getVolunteerTask; the list -> listVolunteerTasks. */
export function operationIdOf(method: string, url: string): string {
  const segments = url.split('/').filter((s) => s && s !== 'api' && s !== 'v1');
  const one = segments.at(-1)?.startsWith('{') ?? false;
  const name = [...segments].reverse().find((s) => !s.startsWith('{')) ?? 'root';
  const words = name.split('-');
  const camel = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  const verb = { get: one ? 'get' : 'list', post: 'create', patch: 'update', put: 'replace', delete: 'delete' }[method] ?? method;
  // One record of a plural collection is named in the singular.
  const noun = one || verb === 'create' ? camel.replace(/s$/, '') : camel;
  return verb + noun;
}

function successDescription(method: string, status: number, one: boolean): string {
  if (status === 201) return 'Created: `{created: true, <record>}`.';
  if (method === 'post') return 'Not created: the existing record it matched (an upsert, an existing registration), `{created: false, <record>}`.';
  if (method === 'patch') return 'Updated, or unchanged when nothing sent differs: the record as it now is.';
  return one ? 'The record.' : 'A page of records: `{<records>, page, pageSize, total}`.';
}

type Operation = { operationId?: string; summary?: string; responses?: Record<string, { description?: string; headers?: Record<string, unknown> }> };

/** Completes every operation of the generated document (see the note at the top). */
export function completeDocument({ openapiObject }: { openapiObject: Record<string, unknown> }) {
  const paths = (openapiObject.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [url, operations] of Object.entries(paths))
    for (const [method, op] of Object.entries(operations)) {
      op.operationId ??= operationIdOf(method, url);
      op.summary ??= op.operationId;
      const one = url.endsWith('}');
      for (const [code, response] of Object.entries(op.responses ?? {})) {
        const status = Number(code);
        // A route whose answer says what it is (the change feed, a history) keeps its own words.
        if (status < 400) response.description = response.description && response.description !== 'Default Response' ? response.description : successDescription(method, status, one);
        else {
          const codes = codesOf(status);
          response.description = `${REASON[status] ?? 'Error'}: \`{error: {code, message, field}}\`${codes.length ? ` with code ${codes.map((c) => `\`${c}\``).join(', ')}` : ''}.`;
        }
        // A request without a valid key is refused before its key's limits are looked at.
        if (status !== 401) response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS };
        if (status === 429) response.headers = { ...response.headers, 'Retry-After': ref('Retry-After') };
      }
    }
  return openapiObject;
}

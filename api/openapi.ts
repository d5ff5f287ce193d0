import { STATUS } from './errors.js';
import { webhooksDocument } from './openapi-webhooks.js';

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
      ETag: { description: 'The record\'s revision in quotes, e.g. `"3"`: one more with each write to it (decisions.md §7).', schema: { type: 'string' as const } },
      'Idempotent-Replayed': {
        description: '`true` when this is the kept answer of an earlier request with the same Idempotency-Key, replayed without running it again.',
        schema: { type: 'string' as const, enum: ['true'] },
      },
    },
    parameters: {
      'If-Match': {
        name: 'If-Match',
        in: 'header' as const,
        required: false,
        description: 'Writes only if the record is at this revision: its ETag (`"3"`), a list of them, or `*`. Otherwise 412 `precondition_failed`, with nothing written.',
        schema: { type: 'string' as const },
      },
      'If-None-Match': {
        name: 'If-None-Match',
        in: 'header' as const,
        required: false,
        description: 'Answers 304 with no body when the record\'s ETag is one of these (or `*`).',
        schema: { type: 'string' as const },
      },
      'Idempotency-Key': {
        name: 'Idempotency-Key',
        in: 'header' as const,
        required: false,
        description:
          'Makes a retry safe: 1 to 255 printable ASCII characters, scoped to the API key and kept 24 hours. A repeat with the same method, path and body ' +
          'answers the first answer again (with `Idempotent-Replayed: true`) and writes nothing; another request with the key is 422 ' +
          '`idempotency_key_reused`; a repeat while the first runs is 409 `idempotency_key_in_progress`. Answers a retry may change (5xx, 429, 412, ' +
          '409 `task_busy`) are not kept.',
        schema: { type: 'string' as const, minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
      },
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
  412: 'Precondition failed',
  413: 'Body too large',
  422: 'Idempotency-Key reused',
  429: 'Rate limited',
  503: 'Retry the same request after Retry-After: written, not yet readable (`write_pending`; with its Idempotency-Key it gets its answer), or too many concurrent writes of the record (`record_busy`; nothing written)',
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
  // POST /constituents/batch -> createConstituentBatch (decisions.md §14).
  if (segments.at(-1) === 'batch' && segments.length > 1) return `${operationIdOf(method, `/${segments.slice(0, -1).join('/')}`)}Batch`;
  const one = segments.at(-1)?.startsWith('{') ?? false;
  const name = [...segments].reverse().find((s) => !s.startsWith('{')) ?? 'root';
  const words = name.split('-');
  const camel = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  const verb = { get: one ? 'get' : 'list', post: 'create', patch: 'update', put: 'replace', delete: 'delete' }[method] ?? method;
  // One record of a plural collection is named in the singular.
  const noun = one || verb === 'create' ? camel.replace(/s$/, '') : camel;
  return verb + noun;
}

function successDescription(method: string, status: number, one: boolean, url = ''): string {
  if (url.endsWith('/batch'))
    return 'The batch ran: `{results: [...]}`, one per item in order, each the single create\'s answer with its `status` beside it (201, 200) or the item\'s own error (`{status: 4xx, error}`). Items are independent: a failed one writes nothing and does not stop the others.';
  if (status === 304) return 'Not modified: the record is still at the revision If-None-Match names.';
  if (status === 201) return 'Created: `{created: true, <record>}`.';
  if (method === 'post') return 'Not created: the existing record it matched (an upsert, an existing registration), `{created: false, <record>}`.';
  if (method === 'patch') return 'Updated, or unchanged when nothing sent differs: the record as it now is.';
  return one ? 'The record.' : 'A page of records: `{<records>, page, pageSize, total}`.';
}

type Response = { description?: string; headers?: Record<string, unknown>; content?: unknown };
type Operation = { operationId?: string; summary?: string; parameters?: unknown[]; responses?: Record<string, Response> };

/** The records whose answers carry an ETag (decisions.md §11). */
const TAGGED = /^\/api\/v1\/(constituents|volunteers|volunteer-tasks|events)(\/\{id\})?$/;

/** decisions.md §11: ETag on single reads and write answers, If-Match on PATCH, If-None-Match and 304 on reads. */
function tagged(method: string, url: string, op: Operation): void {
  const one = url.endsWith('}');
  if (!TAGGED.test(url) || (method === 'get' && !one)) return;
  const responses = (op.responses ??= {});
  for (const [code, response] of Object.entries(responses)) if (Number(code) < 300) response.headers = { ...response.headers, ETag: ref('ETag') };
  const error = Object.entries(responses).find(([code]) => Number(code) >= 400)?.[1];
  if (method === 'patch') {
    op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/If-Match' }];
    responses['412'] ??= { content: error?.content };
  }
  if (method === 'get') {
    op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/If-None-Match' }];
    responses['304'] ??= { headers: { ETag: ref('ETag') } };
  }
}

/** decisions.md §11: POST and PATCH take an Idempotency-Key, with its answers. */
function idempotent(op: Operation): void {
  op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/Idempotency-Key' }];
  const responses = (op.responses ??= {});
  const error = Object.entries(responses).find(([code]) => Number(code) >= 400)?.[1];
  // 503 write_pending: committed, its wait for the read models gave up (api/write-pending.ts);
  // 503 record_busy: lost the append race to other writers past its budget (commands/aggregate.ts).
  for (const code of ['409', '422', '503']) responses[code] ??= { content: error?.content };
  for (const [code, response] of Object.entries(responses))
    if (Number(code) < 500) response.headers = { ...response.headers, 'Idempotent-Replayed': ref('Idempotent-Replayed') };
}

type Body = { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, { items?: object }> } }> } };

/**
 * A batch's items are validated one by one (a bad one is its own result, not the batch's), so its
 * route schema takes any item; the document shows each item as the single create's body.
 */
function describeItems(batch: Operation, single: Operation | undefined) {
  const items = (batch as Body).requestBody?.content?.['application/json']?.schema?.properties?.items;
  const body = (single as Body | undefined)?.requestBody?.content?.['application/json']?.schema;
  if (items && body) items.items = { ...body, description: (items.items as { description?: string } | undefined)?.description };
}

/** Completes every operation of the generated document (see the note at the top). */
export function completeDocument({ openapiObject }: { openapiObject: Record<string, unknown> }) {
  const paths = (openapiObject.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [url, operations] of Object.entries(paths))
    for (const [method, op] of Object.entries(operations)) {
      op.operationId ??= operationIdOf(method, url);
      if (url.endsWith('/batch')) describeItems(op, paths[url.slice(0, -'/batch'.length)]?.post);
      op.summary ??= op.operationId;
      const one = url.endsWith('}');
      if (method === 'post' || method === 'patch') idempotent(op);
      tagged(method, url, op);
      for (const [code, response] of Object.entries(op.responses ?? {})) {
        const status = Number(code);
        // A route whose answer says what it is (the change feed, a history) keeps its own words.
        if (status < 400) response.description = response.description && response.description !== 'Default Response' ? response.description : successDescription(method, status, one, url);
        else {
          // The 503s of a documented route; erasure's (erasure_pending) is on a hidden one.
          const codes = status === 503 ? ['write_pending', 'record_busy'] : codesOf(status);
          response.description = `${REASON[status] ?? 'Error'}: \`{error: {code, message, field}}\`${codes.length ? ` with code ${codes.map((c) => `\`${c}\``).join(', ')}` : ''}.`;
        }
        // A request without a valid key is refused before its key's limits are looked at.
        if (status !== 401) response.headers = { ...response.headers, ...RATE_LIMIT_HEADERS };
        if (status === 429 || status === 503) response.headers = { ...response.headers, 'Retry-After': ref('Retry-After') };
      }
    }
  openapiObject.webhooks = webhooksDocument();
  return openapiObject;
}

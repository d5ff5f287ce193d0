import { envelopeSchema, EVENT_TYPES_WITH_SCHEMAS } from './schemas/webhook-event-types.js';

/**
 * The OpenAPI document's `webhooks` (OpenAPI 3.1; decisions.md 12): one entry per catalog type,
 * the request Turnout sends the subscriber's endpoint, its body the envelope with that type's data
 * schema, the same one GET /api/v1/webhook-event-types serves.
 */
const header = (name: string, description: string) => ({ name, in: 'header' as const, required: true, description, schema: { type: 'string' as const } });

const HEADERS = [
  header('X-Turnout-Event', 'The event type; equals the envelope\u2019s `type`'),
  header('X-Turnout-Delivery', 'Unique per delivery attempt'),
  header('X-Turnout-Signature', '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the signing secret; one v1 per live secret, the newest first'),
  header('webhook-id', 'Standard Webhooks: the envelope `id`, the same on every attempt'),
  header('webhook-timestamp', 'Standard Webhooks: unix seconds of the signing'),
  header('webhook-signature', 'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`, keyed with the base64-decoded part of the secret after `whsec_`; one space-separated entry per live secret'),
  // Only when the operator traces (decisions.md §15): so not required.
  {
    ...header('traceparent', 'W3C trace context of this attempt’s span, linked to the trace of the write that caused the event; sent only when the service runs with tracing on. Not signed'),
    required: false,
  },
];

/** `volunteer_task.signed_up` -> `volunteerTaskSignedUpWebhook`. */
const operationId = (name: string) => name.split(/[._]/).map((w, i) => (i ? w[0].toUpperCase() + w.slice(1) : w)).join('') + 'Webhook';

export function webhooksDocument(): Record<string, unknown> {
  return Object.fromEntries(
    EVENT_TYPES_WITH_SCHEMAS.map((t) => [
      t.name,
      {
        post: {
          operationId: operationId(t.name),
          summary: t.name,
          description: t.description,
          tags: ['Webhooks'],
          // The subscriber's endpoint takes no API key: the signatures authenticate the request.
          security: [],
          parameters: HEADERS,
          requestBody: { required: true, content: { 'application/json': { schema: envelopeSchema(t) } } },
          responses: {
            '2XX': { description: 'Received: any 2xx ends the delivery.' },
            '4XX': { description: 'Not received: retried with backoff, like any other answer but a 2xx (a 410 Gone disables the endpoint).' },
          },
        },
      },
    ]),
  );
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { API_ERRORS, errors } from '../schemas/common.js';
import { EVENT_TYPES_WITH_SCHEMAS, EventTypesAnswer } from '../schemas/webhook-event-types.js';

/** decisions.md 12: the webhook catalog, with the JSON Schema of each type's data; any key of a team. */
export const webhookEventTypeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const answer = { eventTypes: [...EVENT_TYPES_WITH_SCHEMAS] };
  app.get(
    '/webhook-event-types',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'The webhook event types, each with a description and the JSON Schema of its data',
        response: { 200: EventTypesAnswer, ...errors(...API_ERRORS) },
      },
    },
    async () => answer,
  );
};

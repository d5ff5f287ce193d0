import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../runtime/services.js';
import { changeFeed, readChanges } from '../../change-feed.js';
import { parseBound, rangeQuery } from '../../../dispatcher/feed-range.js';
import { TeamParams } from '../../schemas/admin.js';
import { ChangesPage, ChangesQuery, ExportQuery } from '../../schemas/changes.js';
import { errors } from '../../schemas/common.js';

/**
 * Pages as NDJSON, one chunk per page, pulled only when the reader has taken the last one: with a
 * high-water mark of one chunk, a slow client holds the export to a page or two in memory.
 */
export function ndjson(pages: AsyncIterable<string[]>): Readable {
  return Readable.from(
    (async function* () {
      for await (const page of pages) yield page.join('\n') + '\n';
    })(),
    { objectMode: true, highWaterMark: 1 },
  );
}

/** decisions.md §9: a team's change feed and its export, read by the same feed reader. */
export const adminChangeRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/teams/:teamId/changes',
      { schema: { hide: true, params: TeamParams, querystring: ChangesQuery, response: { 200: ChangesPage, ...errors(400, 401, 404) } } },
      // The envelopes' JSON is written as it is, not serialized again (dispatcher/feed-table.ts).
      async (request, reply) =>
        reply.type('application/json').send((await readChanges(services, request.params.teamId, request.query)) as never),
    );

    app.get(
      '/teams/:teamId/export',
      { schema: { hide: true, params: TeamParams, querystring: ExportQuery, response: errors(400, 401, 404) } },
      async (request, reply) => {
        const { from, to, types } = request.query;
        // Every parameter is checked before the first byte, so a bad one is a 400, not a cut stream.
        const q = rangeQuery(from === undefined ? undefined : parseBound(from, 'from'), to === undefined ? undefined : parseBound(to, 'to'), types);
        return reply.type('application/x-ndjson').send(ndjson(changeFeed(services).pages(request.params.teamId, q)) as never);
      },
    );
  };

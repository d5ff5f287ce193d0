import { constituentStream } from '../../domain/constituent/events.js';
import { RESOURCES } from '../../domain/resources.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { readTeamJsonTagged, readTeamRecord, readTeamRecordTagged, readTeamRowTagged, recordJsonShape } from '../../projections/read.js';
import { createConstituentRecord, updateConstituent, upsertConstituentByEmail } from '../../commands/constituents.js';
import { DomainError } from '../../domain/shared/errors.js';
import { CONSTITUENTS, byEmail, constituentSearch } from '../../projections/constituents.js';
import { and, publicView } from '../../projections/store/port.js';
import type { Values } from '../../domain/shared/fields.js';
import { apiContext } from '../auth.js';
import { guardedContext, jsonPrefix, readTagged, readTaggedJson, setEtag, tagged } from '../etag.js';
import { API_ERRORS, API_WRITE_ERRORS, errors, IdParams, pageOf } from '../schemas/common.js';
import * as S from '../schemas/constituent.js';
import type { Services } from '../../runtime/services.js';
import { isPointRead, pointRead } from '../point-in-time.js';
import { OneAsOf, PointQuery } from '../schemas/history.js';

export const readConstituent = (services: Services, team: number, id: number) => readTeamRecord(services.store, CONSTITUENTS, 'constituent', team, id);
export const readConstituentTagged = (services: Services, team: number, id: number) => readTeamRecordTagged(services.store, CONSTITUENTS, 'constituent', team, id);

export const constituentRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addSchema(S.Constituent);
    const tags = ['Constituents'];
    // The single read's answer as the response schema writes it: its fields in its order.
    const shape = recordJsonShape(Object.keys(S.Constituent.properties));
    const prefix = jsonPrefix('constituent');

    app.post(
      `/${RESOURCES.constituent.path}`,
      {
        schema: {
          tags,
          summary: 'Create a constituent, or upsert by email',
          querystring: S.CreateQuery,
          body: S.ConstituentBody,
          response: { 201: S.ConstituentCreated, 200: S.ConstituentCreated, ...errors(...API_WRITE_ERRORS) },
        },
      },
      async (request, reply) => {
        const ctx = apiContext(request);
        const { mode, matchOn } = request.query;
        if ((mode === 'upsert') !== (matchOn === 'email'))
          throw new DomainError('invalid_field', 'Upsert needs both mode=upsert and matchOn=email.', mode ? 'matchOn' : 'mode');
        if (mode === 'upsert') {
          const r = await upsertConstituentByEmail(services, ctx, request.body);
          return reply.code(r.created ? 201 : 200).send({ created: r.created, constituent: await tagged(services, reply, constituentStream(r.id), await readConstituentTagged(services, ctx.team, r.id)) });
        }
        // The record the read model's projector makes of this write's own events, and the
        // revision they left: body and ETag of one state, without reading the row back.
        const { id, record } = await createConstituentRecord(services, ctx, request.body);
        // The revision handle() left: a create always leaves one, so the log is not asked and
        // nothing is awaited.
        const etag = setEtag(services, reply, constituentStream(id), ctx);
        if (etag) await etag;
        return reply.code(201).send({ created: true, constituent: record });
      },
    );

    app.patch(
      `/${RESOURCES.constituent.path}/:id`,
      {
        schema: { tags, summary: 'Update a constituent; only sent fields change', params: IdParams, body: S.ConstituentBody, response: { 200: S.ConstituentOne, ...errors(...API_WRITE_ERRORS) } },
      },
      async (request, reply) => {
        const stream = constituentStream(request.params.id);
        const ctx = guardedContext(apiContext(request), request, stream);
        await updateConstituent(services, ctx, request.params.id, request.body);
        return { constituent: await tagged(services, reply, stream, await readConstituentTagged(services, ctx.team, request.params.id)) };
      },
    );

    app.get(
      `/${RESOURCES.constituent.path}/:id`,
      { schema: { tags, summary: 'One constituent, now or as it stood (asOf, revision)', params: IdParams, querystring: PointQuery, response: { 200: OneAsOf('constituent', S.ConstituentRef), ...errors(...API_ERRORS) } } },
      // Not async: the ordinary read from a store that keeps the text (SQLite) sends it and makes no promise.
      (request, reply) => {
        const team = request.apiKey!.FkTeam;
        const id = request.params.id;
        if (isPointRead(request.query)) return pointRead(services, 'constituent', team, id, request.query).then((r) => r!);
        const stream = constituentStream(id);
        const sent = readTaggedJson(services, request, reply, stream, prefix, () => readTeamJsonTagged(services.store, CONSTITUENTS, 'constituent', team, id, shape));
        if (sent !== null) return sent;
        // The row as stored: the response schema's serializer shows the record's fields only.
        return readTagged(services, request, reply, stream, 'constituent', () => readTeamRowTagged(services.store, CONSTITUENTS, 'constituent', team, id));
      },
    );

    app.get(
      `/${RESOURCES.constituent.path}`,
      {
        schema: {
          tags,
          summary: 'Look up by email, or search by name, email or id',
          querystring: S.ListQuery,
          response: { 200: S.ConstituentList, ...errors(...API_ERRORS) },
        },
      },
      async (request) => {
        const team = apiContext(request).team;
        const page = pageOf(request.query);
        const { email, search } = request.query;
        const query =
          email !== undefined
            ? { collection: CONSTITUENTS, filter: and(byEmail(team, email), search ? constituentSearch(team, search, page).filter : undefined), sort: [{ field: 'PkConstituent', dir: 'asc' as const }], page }
            : constituentSearch(team, search, page);
        const r = await services.store.find<Values>(query);
        return { constituents: r.items.map(publicView), ...page, total: r.total };
      },
    );
  };

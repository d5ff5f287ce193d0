import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { type BatchResource, type ItemOutcome, MAX_BATCH_ITEMS, writeBatch } from '../../commands/batch.js';
import { createConstituentRecord, upsertConstituentRecord } from '../../commands/constituents.js';
import type { WriteContext } from '../../commands/context.js';
import { createEvent } from '../../commands/events.js';
import { createTask, recheckAssignment } from '../../commands/volunteer-tasks.js';
import { recheckRegistration, registerVolunteer } from '../../commands/volunteers.js';
import { RESOURCES } from '../../domain/resources.js';
import { DomainError } from '../../domain/shared/errors.js';
import type { Values } from '../../domain/shared/fields.js';
import type { CommandDeps } from '../../commands/deps.js';
import type { Services } from '../../runtime/services.js';
import { errorOf, STATUS } from '../errors.js';
import { fromValidation } from '../../validation/errors.js';
import { buildValidator } from '../../validation/validator.js';
import { TeamParams } from '../schemas/admin.js';
import { API_WRITE_ERRORS, ErrorSchema, errors, Query } from '../schemas/common.js';
import * as C from '../schemas/constituent.js';
import * as E from '../schemas/event.js';
import * as T from '../schemas/volunteer-task.js';
import * as V from '../schemas/volunteer.js';
import { readConstituent } from './constituents.js';
import { readEvent } from './events.js';
import { readTask } from './volunteer-tasks.js';
import { readVolunteer } from './volunteers.js';

/** decisions.md §14: a batch may be far bigger than one body (64 KB), on these routes only. */
export const BATCH_BODY_LIMIT = 16 * 1024 * 1024;

type Created = { id: number; created: boolean; record?: Values };
type Write = (deps: CommandDeps, ctx: WriteContext, body: Values) => Promise<Created>;

/** The resources a batch writes; their path, stream category and answer key are domain/resources.ts's. */
type Batched = (typeof RESOURCES)['constituent' | 'volunteer' | 'volunteerTask' | 'event'];

interface Kind extends Pick<Batched, 'path' | 'key' | 'category'> {
  /** The single create's body schema: each item is checked against it on its own. */
  body: TSchema;
  record: TSchema;
  /** The record's fields in the order its schema gives them, as the single create's answer has them. */
  fields: string[];
  query?: TSchema;
  /**
   * The single create's command for the query sent; `settlesOnce` when it waits for the read
   * models only for its own appends (commands/batch.ts).
   */
  write(query: Record<string, string | undefined>): { write: Write; settlesOnce: boolean };
  read(services: Services, team: number, id: number): Promise<Values>;
  /** What the single create does after its commit, done again for an item an earlier try committed (commands/batch.ts). */
  resumed?: BatchResource['resumed'];
}

const pick = ({ path, key, category }: Batched) => ({ path, key, category });

const created = (create: (deps: CommandDeps, ctx: WriteContext, body: Values) => Promise<number>): Write => async (deps, ctx, body) => ({ id: await create(deps, ctx, body), created: true });

const KINDS: Kind[] = [
  {
    ...pick(RESOURCES.constituent),
    body: C.ConstituentBody,
    record: C.ConstituentRef,
    fields: Object.keys(C.Constituent.properties),
    query: C.CreateQuery,
    write: ({ mode, matchOn }) => {
      if ((mode === 'upsert') !== (matchOn === 'email')) throw new DomainError('invalid_field', 'Upsert needs both mode=upsert and matchOn=email.', mode ? 'matchOn' : 'mode');
      // Its record as this item left it: a later item of the batch may upsert the same email.
      if (mode === 'upsert') return { write: upsertConstituentRecord, settlesOnce: false };
      // The single create's own command and answer: the record made from the item's events.
      return { write: async (deps, ctx, body) => ({ ...(await createConstituentRecord(deps, ctx, body)), created: true }), settlesOnce: true };
    },
    read: readConstituent,
  },
  { ...pick(RESOURCES.volunteer), body: V.CreateVolunteerBody, record: V.VolunteerRef, fields: Object.keys(V.Volunteer.properties), write: () => ({ write: registerVolunteer, settlesOnce: false }), read: readVolunteer, resumed: recheckRegistration },
  { ...pick(RESOURCES.volunteerTask), body: T.CreateTaskBody, record: T.VolunteerTaskRef, fields: Object.keys(T.VolunteerTask.properties), write: () => ({ write: created(createTask), settlesOnce: false }), read: readTask, resumed: recheckAssignment },
  { ...pick(RESOURCES.event), body: E.EventCreateBody, record: E.EventRef, fields: Object.keys(E.Event.properties), write: () => ({ write: created(createEvent), settlesOnce: false }), read: (s, team, id) => readEvent(s.store, team, id) },
];

const BatchBody = (kind: Kind) =>
  Type.Object(
    {
      items: Type.Array(
        Type.Unknown({
          description: `One body of the single create (POST /${kind.path}), each checked on its own: a bad one is that item's 400 result, not the batch's.`,
        }),
        { minItems: 1, maxItems: MAX_BATCH_ITEMS, description: `1 to ${MAX_BATCH_ITEMS} create bodies, written in this order.` },
      ),
    },
    { additionalProperties: false },
  );

/** The result union (decisions.md §14): the single create's answer with its status, or the item's error with its status. */
const BatchResults = (kind: Kind) =>
  Type.Object({
    results: Type.Array(
      Type.Union([
        Type.Object({ status: Type.Integer({ enum: [200, 201], description: '201 created; 200 an existing record matched (an upsert, an existing registration)' }), created: Type.Boolean(), [kind.key]: kind.record }),
        Type.Object({ status: Type.Integer({ minimum: 400, maximum: 499, description: 'The status the single create would have answered' }), error: ErrorSchema.properties.error }),
      ]),
      { description: 'One result per item, in the items\' order.' },
    ),
  });

/** The single create's body limit (api/app.ts BODY_LIMIT, not imported: app.ts imports the routes). */
const ITEM_LIMIT = 64 * 1024;

/** The nesting past which jsonBytesBound gives up and the item is measured exactly. */
const BOUND_DEPTH = 16;

/**
 * At least the UTF-8 bytes of JSON.stringify(value), found without writing it, or Infinity once
 * past `limit` (or for anything but JSON.parse's plain values): every UTF-16 unit of a string
 * writes at most 6 bytes (a control character's or a lone surrogate's `\u001f`), a number at most
 * 25 characters (`-0.0000012345678901234567`: 17 digits written after five zeros; the exponent's
 * form, `-1.2345678901234567e-308`, is 24). An import's row bounds at about 2 KB against the 64 KB limit, so the exact
 * measure, a JSON.stringify of every item (the batch route's most costly check a row), is left to
 * the rare item that may be near it.
 */
export function jsonBytesBound(value: unknown, limit: number, depth = 0): number {
  switch (typeof value) {
    case 'string':
      return 2 + 6 * value.length;
    case 'number':
      return 25;
    case 'boolean':
      return 5;
    case 'object': {
      if (value === null) return 4;
      if (depth >= BOUND_DEPTH) return Infinity;
      let size = 2;
      if (Array.isArray(value)) {
        for (const v of value) if ((size += 1 + jsonBytesBound(v, limit, depth + 1)) > limit) return Infinity;
        return size;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return Infinity;
      for (const k in value) {
        if ((size += 4 + 6 * k.length + jsonBytesBound((value as Record<string, unknown>)[k], limit, depth + 1)) > limit) return Infinity;
      }
      return size;
    }
    default:
      return Infinity;
  }
}

/**
 * Each item checked as the single route checks its body, in the API's own words: its body limit
 * (an item the single create would refuse as too large is that item's 413), then its schema.
 */
function itemChecker(schema: TSchema): (body: unknown) => Values {
  type Check = ((data: unknown) => boolean) & { errors?: unknown[] };
  // Compiled with the first batch, not at the start, as the routes' own schemas (api/lazy-schemas.ts).
  let check: Check | null = null;
  return (body) => {
    if (jsonBytesBound(body, ITEM_LIMIT) > ITEM_LIMIT && Buffer.byteLength(JSON.stringify(body) ?? '') > ITEM_LIMIT) throw new DomainError('payload_too_large', 'This item is over 64 KB as JSON, the single create\'s body limit; send less.');
    check ??= buildValidator({})({ schema, httpPart: 'body' }) as unknown as Check;
    if (!check(body)) throw fromValidation(check.errors as never, 'body');
    return body as Values;
  };
}

/**
 * A record as the single create's serializer writes it: the schema's fields, in its order, those
 * the record holds. Written straight as JSON text, one batch's answer holding up to a thousand:
 * one JSON.stringify of an object literal of the fields (compiled once per resource), which
 * leaves out a field whose value is undefined as the field-by-field writer below does. Built a
 * field at a time, the text was two strings a field, the most the batch route allocated a row.
 */
export function recordWriter(fields: string[]): (record: Values) => string {
  // A name an object literal would not keep as its own field (`__proto__`), or would put before
  // the others (an array index), is written field by field.
  if (fields.some((f) => f in Object.prototype || /^\d+$/.test(f))) return fieldByField(fields);
  const literal = new Function('r', `return { ${fields.map((f) => `${JSON.stringify(f)}: r[${JSON.stringify(f)}]`).join(', ')} };`) as (record: Values) => Values;
  return (record) => JSON.stringify(literal(record));
}

function fieldByField(fields: string[]): (record: Values) => string {
  const names = fields.map((f) => `${JSON.stringify(f)}:`);
  return (record) => {
    let out = '';
    for (let i = 0; i < fields.length; i++) {
      const v = record[fields[i]];
      // Left out, as JSON.stringify leaves out a key whose value is undefined.
      if (v === undefined) continue;
      out += `${out ? ',' : ''}${names[i]}${JSON.stringify(v)}`;
    }
    return `{${out}}`;
  };
}

/**
 * One item's result as JSON text (decisions.md §14): the single create's answer with its status, or
 * its error. An outcome without its record is read back after the batch: a volunteer, task or event
 * that no later item of a batch of them changes (registering an existing volunteer writes nothing to
 * it), so it reads as its item left it, the names it shows from linked records as they are now.
 */
const resultOf = async (kind: Kind, write: (record: Values) => string, services: Services, team: number, outcome: ItemOutcome): Promise<string> => {
  if (outcome instanceof DomainError) return JSON.stringify({ status: STATUS[outcome.code], error: errorOf(outcome) });
  const record = outcome.record ?? (await kind.read(services, team, outcome.id));
  return `{"status":${outcome.created ? 201 : 200},"created":${outcome.created},"${kind.key}":${write(record)}}`;
};

/**
 * `POST .../{constituents,volunteers,volunteer-tasks,events}/batch` (decisions.md §14), on /api/v1
 * (`contextOf` the API key's) and on /admin/v1/teams/:teamId (the admin's, for `turnout import`).
 * The surrounding plugin's hooks apply as to any write: the key, one rate-limit count for the
 * whole batch, and the Idempotency-Key, whose scope and key mark the items (commands/batch.ts).
 */
export const batchRoutes =
  (services: Services, surface: { prefix: string; contextOf: (request: FastifyRequest) => WriteContext; hide?: boolean; tags?: boolean }): FastifyPluginAsyncTypebox =>
  async (app) => {
    for (const kind of KINDS) {
      const check = itemChecker(kind.body);
      const write = recordWriter(kind.fields);
      app.post(
        `${surface.prefix}/${kind.path}/batch`,
        {
          bodyLimit: BATCH_BODY_LIMIT,
          // Its key resumes the batch through its journal, item by item (api/idempotency.ts).
          config: { journaled: true },
          // The answer is written as JSON text by resultOf (below), large as it is: no schema
          // serializer testing each result's union.
          serializerCompiler: () => (data) => JSON.stringify(data),
          schema: {
            ...(surface.hide ? { hide: true } : {}),
            ...(surface.tags ? { tags: [kind.path === 'volunteer-tasks' ? 'Volunteer tasks' : kind.path[0].toUpperCase() + kind.path.slice(1)] } : {}),
            summary: `Create up to ${MAX_BATCH_ITEMS} ${kind.path.replace('-', ' ')} in one call; a result per item, in order`,
            ...(surface.prefix ? { params: TeamParams } : {}),
            querystring: kind.query ?? Query({}),
            body: BatchBody(kind),
            response: { 200: BatchResults(kind), ...errors(...API_WRITE_ERRORS, 422) },
          },
        },
        async (request, reply) => {
          const ctx = surface.contextOf(request);
          const { write: command, settlesOnce } = kind.write(request.query as Record<string, string | undefined>);
          const resource: BatchResource = {
            category: kind.category,
            idKind: kind.category,
            settlesOnce,
            write: (deps, itemCtx, body) => command(deps, { ...itemCtx, now: new Date() }, check(body)),
            ...(kind.resumed ? { resumed: kind.resumed } : {}),
          };
          const { items } = request.body as { items: unknown[] };
          const outcomes = await writeBatch(services, ctx, resource, items, request.idempotent);
          const results = await Promise.all(outcomes.map((o) => resultOf(kind, write, services, ctx.team, o)));
          // Text the response schema describes, already JSON (the typed reply expects the object).
          return reply.type('application/json; charset=utf-8').send(`{"results":[${results.join(',')}]}` as never);
        },
      );
    }
  };

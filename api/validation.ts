import { Type } from '@sinclair/typebox';
import type { RouteOptions } from 'fastify';

const NO_PARAMETERS = Type.Object({}, { additionalProperties: false });

/**
 * decisions.md §4: an unknown query parameter is 400 unknown_field on every route. Routes with
 * no query schema of their own (single reads, look-ups) take none, so they get an empty one.
 */
export function refuseUnknownQuery(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  schema.querystring ??= NO_PARAMETERS;
}

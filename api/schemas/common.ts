import { type TObject, type TProperties, type TSchema, Type } from '@sinclair/typebox';
import { ERROR_CODES } from '../errors.js';
import { TRANSPORT_STATUS } from '../transport.js';

export { Nullable } from '../../validation/fields.js';

export const ErrorSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ enum: [...ERROR_CODES, ...Object.keys(TRANSPORT_STATUS), 'internal_error'] }),
      message: Type.String(),
      field: Type.Optional(Type.String()),
    }),
  },
  { $id: 'Error', description: 'Every error: a machine code, text saying what to fix, and the offending field where there is one.' },
);

const errorRef = Type.Ref(ErrorSchema);

/** The error answers a route can give, for its response schema. */
export function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, errorRef]));
}

/** Statuses every authenticated /api/v1 route can answer with. */
export const API_ERRORS = [400, 401, 404, 429];
export const API_WRITE_ERRORS = [400, 401, 403, 404, 409, 413, 429];

export const IdParams = Type.Object({ id: Type.Integer({ minimum: 1, description: 'The record id' }) }, { additionalProperties: false });

export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'Page number from 1' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: '1 to 100; default 25' })),
};

export const pageOf = (q: { page?: number; pageSize?: number }) => ({ page: q.page ?? 1, pageSize: q.pageSize ?? 25 });

export function Query<P extends TProperties>(props: P): TObject<P> {
  return Type.Object(props, { additionalProperties: false });
}

/** `{<plural>: [...], page, pageSize, total}` (decisions.md 4). */
export function ListOf<K extends string>(key: K, item: TSchema, extra: TProperties = {}) {
  return Type.Object({ [key]: Type.Array(item), page: Type.Integer(), pageSize: Type.Integer(), total: Type.Integer(), ...extra });
}

export function Created<K extends string>(key: K, item: TSchema) {
  return Type.Object({ created: Type.Boolean(), [key]: item });
}

export function One<K extends string>(key: K, item: TSchema) {
  return Type.Object({ [key]: item });
}

/** A body for admin meta-resources: camelCase keys, nothing unknown. */
export const Body = <P extends TProperties>(props: P) => Type.Object(props, { additionalProperties: false });
/**
 * The body of an operation that takes none (a test send, a resend, a lock): absent, null or {},
 * so a field sent anyway is 400 unknown_field naming it rather than silently ignored.
 */
export const NoBody = Type.Union([Body({}), Type.Null()]);

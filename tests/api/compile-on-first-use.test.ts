import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { buildSerializer, buildValidator } from '../../api/validation.js';

/**
 * Route validators and response serializers are compiled at their first use, not while the app is
 * built (api/validation.ts onFirstUse): what they answer must be what the compiled ones answer.
 */
describe('validators and serializers compiled at first use', () => {
  it('compiles a serializer only when it first answers, then serializes by its schema', () => {
    const compile = buildSerializer({}, undefined);
    // fast-json-stringify refuses this schema: building the route must not ask it yet.
    const broken = compile({ method: 'GET', url: '/x', httpStatus: '200', schema: { type: 'object', properties: { a: { $ref: '#/nowhere' } } } });
    expect(() => broken({ a: 1 })).toThrow();
    const ok = compile({ method: 'GET', url: '/y', httpStatus: '200', schema: Type.Object({ id: Type.Integer(), name: Type.String() }) });
    expect(ok({ id: 7, name: 'Ada', extra: true })).toBe('{"id":7,"name":"Ada"}');
  });

  it('hands on a validator’s errors for each call, as Fastify reads them after it', () => {
    const compile = buildValidator({}) as unknown as (route: { schema: object; httpPart: string }) => ((data: unknown) => boolean) & { errors?: Array<{ instancePath: string }> | null };
    const body = compile({ schema: Type.Object({ n: Type.Integer() }, { additionalProperties: false }), httpPart: 'body' });
    expect(body({ n: '5' })).toBe(false);
    expect(body.errors?.[0].instancePath).toBe('/n');
    expect(body({ n: 5 })).toBe(true);
    expect(body.errors).toBeNull();
    const query = compile({ schema: Type.Object({ page: Type.Integer() }), httpPart: 'querystring' });
    expect(query({ page: '0x10' })).toBe(false);
    expect(query.errors?.[0].instancePath).toBe('/page');
  });
});

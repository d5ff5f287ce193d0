import type { components, operations, webhooks } from './openapi.js';

/**
 * Names for the generated types (openapi.ts), so the resources read them by operation instead of
 * repeating the API's shapes by hand.
 */
export type OperationId = keyof operations;

type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body an operation takes. */
export type RequestBody<O extends OperationId> = operations[O] extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;

/** An operation's query parameters (all optional where the API says so); none: an empty object type. */
export type QueryOf<O extends OperationId> = operations[O]['parameters'] extends { query?: infer Q } ? ([NonNullable<Q>] extends [never] ? Record<never, never> : NonNullable<Q>) : Record<never, never>;

/** The JSON answer of one success status of an operation. */
export type AnswerOf<O extends OperationId, S extends number> = operations[O]['responses'] extends infer R
  ? S extends keyof R
    ? JsonOf<R[S]>
    : never
  : never;

/** A create's answer: `{created: true, <key>}` (201), or `{created: false, <key>}` (200) where the API matches. */
export type CreateAnswer<O extends OperationId> = AnswerOf<O, 201> | AnswerOf<O, 200>;

/** One element of a list answer's array under `key`. */
export type ItemOf<O extends OperationId, K extends string> = AnswerOf<O, 200> extends { [P in K]: Array<infer T> } ? T : never;

/** The API's error body. */
export type ErrorBody = components['schemas']['Error'];

/** The request Turnout sends for each webhook type: the envelope, typed by `type`. */
type WebhookBody<K extends keyof webhooks> = webhooks[K] extends { post: infer P } ? (P extends { requestBody: infer R } ? JsonOf<R> : never) : never;

/** Every webhook envelope, a union discriminated by `type` over the catalog's types. */
export type WebhookEnvelope = { [K in keyof webhooks]: WebhookBody<K> }[keyof webhooks];

/** The change feed's elements: exactly the webhook envelopes of the team's changes (the test ping never is one). */
export type ChangeEnvelope = Exclude<WebhookEnvelope, { type: 'webhook.ping' }>;

/** A catalog type name, as the change feed's `types` filter takes it (a name or a `<resource>.*` prefix). */
export type ChangeType = ChangeEnvelope['type'] | `${ChangeEnvelope['type'] extends `${infer R}.${string}` ? R : never}.*`;

export type { components, operations, paths, webhooks } from './openapi.js';

import { TurnoutError } from './errors.js';
import { type QueryValue, type Requester, uuid, type WithResponse } from './http.js';
import { type Lister, lister } from './paging.js';
import type { AnswerOf, CreateAnswer, ItemOf, OperationId, QueryOf, RequestBody } from './types.js';

export interface WriteOptions {
  /** The Idempotency-Key to send (1..255 printable ASCII); a random UUID unless given. The same on every retry. */
  idempotencyKey?: string;
}

export interface CreateOptions extends WriteOptions {
  /** Constituents only: update the one active constituent with this Email1, or create (`mode=upsert&matchOn=email`). */
  upsert?: boolean;
}

export interface GetOptions {
  /** The record as it stood at this instant (a Date or an ISO date-time). */
  asOf?: Date | string;
  /** The record right after this revision. */
  revision?: number;
}

export interface UpdateOptions extends WriteOptions {
  /** Write only if the record is still at this revision (its ETag, e.g. `3`, or `lastResponse.etag`); else 412 `precondition_failed`. */
  ifMatch?: number | string;
}

export interface BatchOptions extends WriteOptions {
  /** Constituents only: each item upserts on Email1, as `create(item, { upsert: true })`. */
  upsert?: boolean;
}

/** One item of a batch: the single create's body. */
export type BatchItem<Batch extends OperationId> = RequestBody<Batch> extends { items: Array<infer I> } ? I : never;

/** One item's result in a batch (decisions §14): the single create's answer with its status, or its error. */
export type BatchResult<Batch extends OperationId> = AnswerOf<Batch, 200> extends { results: Array<infer R> } ? R : never;

/** The API accepts at most this many items in one batch request (decisions §14). */
export const MAX_BATCH = 1000;

/** The longest Idempotency-Key the API takes (decisions §11). */
const MAX_KEY = 255;

/** The operation ids and keys that type one writable resource. */
interface Ops {
  create: OperationId;
  get: OperationId;
  update: OperationId;
  list: OperationId;
  history: OperationId;
  batch: OperationId;
  plural: string;
}

type HistoryEntry<O extends Ops> = ItemOf<O['history'], 'history'>;

export interface WritableResource<O extends Ops> {
  create(body: RequestBody<O['create']>, options?: CreateOptions): Promise<WithResponse<CreateAnswer<O['create']>>>;
  get(id: number, options?: GetOptions): Promise<WithResponse<AnswerOf<O['get'], 200>>>;
  update(id: number, patch: RequestBody<O['update']>, options?: UpdateOptions & QueryOf<O['update']>): Promise<WithResponse<AnswerOf<O['update'], 200>>>;
  list: Lister<QueryOf<O['list']>, ItemOf<O['list'], O['plural']>, AnswerOf<O['list'], 200>>;
  history: {
    (id: number): AsyncIterable<HistoryEntry<O>>;
    page(id: number, query?: QueryOf<O['history']>): Promise<WithResponse<AnswerOf<O['history'], 200>>>;
  };
  createBatch(items: ReadonlyArray<BatchItem<O['batch']>>, options?: BatchOptions): Promise<BatchResult<O['batch']>[]>;
}

export interface ReadOnlyResource<Get extends OperationId, List extends OperationId, Plural extends string> {
  get(id: number): Promise<WithResponse<AnswerOf<Get, 200>>>;
  list: Lister<QueryOf<List>, ItemOf<List, Plural>, AnswerOf<List, 200>>;
}

const upsertQuery = (upsert: boolean | undefined) => (upsert ? { mode: 'upsert', matchOn: 'email' } : undefined);

function checkId(id: number): number {
  if (!Number.isSafeInteger(id) || id < 1) throw new TypeError(`id must be a positive integer, got ${String(id)}`);
  return id;
}

export function writable<O extends Ops>(http: Requester, path: string, plural: O['plural']): WritableResource<O> {
  const one = (id: number) => `${path}/${checkId(id)}`;
  const historyPage = async (id: number, query?: object) => http.send<any>({ method: 'GET', path: `${one(id)}/history`, query: query as Record<string, string> });
  async function* historyOf(id: number) {
    yield* lister<object, any, any>(http, `${one(id)}/history`, 'history')();
  }
  const history = Object.assign(historyOf, { page: historyPage });
  return {
    create: async (body, options = {}) => http.send({ method: 'POST', path, body, query: upsertQuery(options.upsert), idempotencyKey: options.idempotencyKey }),
    // async, so a bad id rejects the promise like any other failure instead of throwing.
    get: async (id, options = {}) => {
      const asOf = options.asOf instanceof Date ? options.asOf.toISOString() : options.asOf;
      return http.send({ method: 'GET', path: one(id), query: { asOf, revision: options.revision } });
    },
    update: async (id, patch, options) => {
      const { ifMatch, idempotencyKey, ...query } = (options ?? {}) as UpdateOptions & Record<string, QueryValue>;
      const headers: Record<string, string> = ifMatch === undefined ? {} : { 'if-match': /^(\*|(W\/)?".*)$/.test(String(ifMatch)) ? String(ifMatch) : `"${ifMatch}"` };
      return http.send({ method: 'PATCH', path: one(id), body: patch, query, headers, idempotencyKey });
    },
    list: lister(http, path, plural),
    history,
    async createBatch(items, options = {}) {
      const results: BatchResult<O['batch']>[] = [];
      // In order, one batch at a time: results stay in input order, and a batch is one request
      // against the key's rate limit. One key for the whole call (random unless given) makes one
      // per batch, and a failure names it: the same call run again with it replays the batches
      // that committed instead of creating their records twice.
      const key = options.idempotencyKey ?? uuid();
      // The API takes keys of 1..255 characters (decisions §11): `<key>.<n>` must fit too.
      const room = MAX_KEY - 1 - String(Math.max(0, Math.ceil(items.length / MAX_BATCH) - 1)).length;
      if (key.length > room) throw new TypeError(`createBatch: an idempotencyKey of at most ${room} characters here, as batch n is sent with <key>.<n> (the API takes 255 at most)`);
      for (let start = 0, n = 0; start < items.length; start += MAX_BATCH, n++) {
        const answer = await http
          .send<{ results: BatchResult<O['batch']>[] }>({
            method: 'POST',
            path: `${path}/batch`,
            body: { items: items.slice(start, start + MAX_BATCH) },
            query: upsertQuery(options.upsert),
            idempotencyKey: `${key}.${n}`,
          })
          .catch((e: unknown) => {
            throw e instanceof TurnoutError ? e.withKey(key) : e;
          });
        results.push(...answer.results);
      }
      return results;
    },
  };
}

export function readOnly<Get extends OperationId, List extends OperationId, Plural extends string>(http: Requester, path: string, plural: Plural): ReadOnlyResource<Get, List, Plural> {
  return {
    get: async (id) => http.send({ method: 'GET', path: `${path}/${checkId(id)}` }),
    list: lister(http, path, plural),
  };
}

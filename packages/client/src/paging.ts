import type { QueryValue, Requester, WithResponse } from './http.js';

/** `list(query)`: every record over every page, as an async iterable; `list.page(query)`: one page's answer. */
export interface Lister<Query, Item, Page> {
  (query?: Query): AsyncIterable<Item>;
  page(query?: Query): Promise<WithResponse<Page>>;
}

/** The largest page the API serves (decisions §4), so a full walk takes the fewest requests. */
export const MAX_PAGE_SIZE = 100;

/**
 * A lister over a paged route: it asks for the query's page (1 unless given) and the next ones
 * until a page comes back short or `total` is reached.
 */
export function lister<Query extends object, Item, Page>(http: Requester, path: string, key: string): Lister<Query, Item, Page> {
  const page = (query?: Query) => http.send<Page>({ method: 'GET', path, query: query as Record<string, QueryValue> });
  const list = (query?: Query): AsyncIterable<Item> => ({
    async *[Symbol.asyncIterator]() {
      const q = { ...query } as Record<string, QueryValue>;
      let n = Number(q.page ?? 1);
      const size = Number(q.pageSize ?? MAX_PAGE_SIZE);
      for (;;) {
        const answer = (await page({ ...q, page: n, pageSize: size } as Query)) as Record<string, unknown>;
        const items = (answer[key] ?? []) as Item[];
        yield* items;
        const total = typeof answer.total === 'number' ? answer.total : undefined;
        if (items.length < size || total === undefined || n * size >= total) return;
        n++;
      }
    },
  });
  return Object.assign(list, { page });
}

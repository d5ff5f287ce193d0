import type { Requester, WithResponse } from './http.js';
import type { AnswerOf, ChangeEnvelope, ChangeType } from './types.js';

export interface ChangesQuery {
  /** A cursor from an earlier `next` (or `cursor`), or `now` for the current end; absent: from the beginning. */
  after?: string;
  /** Catalog types or `<resource>.*` prefixes; all types when absent. */
  types?: ChangeType | readonly ChangeType[];
  /** Envelopes per request, 1..1000 (default 100). */
  limit?: number;
  /** At the head, how long one request waits for a change, 0..30 seconds (default 0; 30 when following). */
  wait?: number;
}

export interface ChangesListOptions extends ChangesQuery {
  /** false (default): stop at the head of the feed. true: long-poll for new changes for ever. */
  follow?: boolean;
  /** Ends a follow: the iteration then throws the signal's reason. */
  signal?: AbortSignal;
}

/** The feed as an async iterable of envelopes; `cursor` resumes after the last one read. */
export interface ChangeStream extends AsyncIterable<ChangeEnvelope> {
  /**
   * Where to resume: the `next` of the last answer read through (the `after` given, until then).
   * Envelopes of an answer read only part-way come again from it: at least once, as webhooks.
   */
  readonly cursor: string | undefined;
}

type FeedPage = AnswerOf<'listChanges', 200>;

/** The longest wait the API allows (decisions §10). */
const MAX_WAIT = 30;

export function changes(http: Requester) {
  const page = (query: ChangesQuery & { signal?: AbortSignal } = {}): Promise<WithResponse<FeedPage>> => {
    const { signal, types, ...rest } = query;
    return http.send<FeedPage>({
      method: 'GET',
      path: '/changes',
      query: { ...rest, types: typeof types === 'string' ? types : types?.join(',') },
      extraTimeoutMs: (query.wait ?? 0) * 1000,
      signal,
    });
  };

  const list = (options: ChangesListOptions = {}): ChangeStream => {
    const { follow = false, signal, wait, ...query } = options;
    let cursor = query.after;
    return {
      get cursor() {
        return cursor;
      },
      async *[Symbol.asyncIterator]() {
        let atHead = false;
        for (;;) {
          // Catch up without waiting; at the head, a follower long-polls.
          const answer = await page({ ...query, after: cursor, wait: atHead && follow ? (wait ?? MAX_WAIT) : wait, signal });
          for (const envelope of answer.changes as ChangeEnvelope[]) yield envelope;
          // The envelopes of one answer are yielded before the cursor moves past them, so a
          // consumer that stops part-way resumes at that answer, never past what it did not see.
          cursor = answer.next;
          atHead = !answer.hasMore;
          if (atHead && !follow) return;
        }
      },
    };
  };

  return { list: Object.assign(list, { page }) };
}

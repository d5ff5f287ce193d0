import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WriteContext } from '../commands/context.js';
import { invalidField } from '../domain/shared/errors.js';
import { revisionOfStream } from '../eventlog/load.js';
import type { Values } from '../domain/shared/fields.js';
import type { Services } from '../runtime/services.js';

/**
 * ETags (decisions.md §11): a record's ETag is its revision (decisions.md §7, domain/shared/revision.ts)
 * in quotes. Single reads and write answers carry it; If-Match guards a PATCH or an admin DELETE
 * (the check itself is commands/aggregate.ts handle()'s, against the append's expected revision);
 * If-None-Match makes a single read 304.
 */

const TAG = /^(W\/)?"(\d+)"$/;

/**
 * The tags of an If-Match / If-None-Match list: '*' for any, else {weak, revision}; malformed is
 * 400. A tag's revision is kept as its text: tags compare by their characters (RFC 9110), so
 * `"01"` is not the ETag `"1"`.
 */
function tagsOf(header: string, name: string): '*' | Array<{ weak: boolean; revision: string }> {
  if (header.trim() === '*') return '*';
  return header.split(',').map((t) => {
    const m = TAG.exec(t.trim());
    if (!m) throw invalidField(name, `${name} must be "*" or a list of ETags such as "3" (with the quotes).`);
    return { weak: Boolean(m[1]), revision: m[2] };
  });
}

/**
 * The write context of a request, with its If-Match on the record's stream: the write is 412 when
 * the record is at another revision. Strong comparison (RFC 9110): a weak tag never matches.
 */
export function guardedContext(ctx: WriteContext, request: FastifyRequest, stream: string): WriteContext {
  const header = request.headers['if-match'];
  const revisions = ctx.revisions ?? new Map<string, number>();
  if (header === undefined) return { ...ctx, revisions };
  const tags = tagsOf(String(header), 'If-Match');
  const matches = tags === '*' ? (r: number) => r > 0 : (r: number) => tags.some((t) => !t.weak && t.revision === String(r));
  return { ...ctx, revisions, ifMatch: { stream, matches } };
}

/** A record as its read model holds it, with the revision that body was projected from (projections/read.ts). */
export interface TaggedRecord {
  record: Values;
  /** Null for a row written before read models kept it: the log's revision stands in. */
  revision: number | null;
}

const revisionOf = async (services: Services, stream: string, read: TaggedRecord) => read.revision ?? (await revisionOfStream(services.log, stream));

/**
 * Sets the ETag of a write's answer to the revision of the record it shows, and answers that
 * record: read after the write settled, it is at least what the write left, and a later write by
 * another caller shows in both the body and its tag, never in one alone.
 */
export async function tagged(services: Services, reply: FastifyReply, stream: string, read: TaggedRecord): Promise<Values> {
  reply.header('ETag', `"${await revisionOf(services, stream, read)}"`);
  return read.record;
}

/**
 * Sets the ETag of a write's answer from the revision this write left, else the log's. Set at
 * once when the write left one (every write that appended): a promise only when the log is asked.
 */
export function setEtag(services: Services, reply: FastifyReply, stream: string, ctx?: WriteContext): Promise<void> | undefined {
  const set = (revision: number) => void reply.header('ETag', `"${revision}"`);
  const left = ctx?.revisions?.get(stream);
  return left === undefined ? revisionOfStream(services.log, stream).then(set) : set(left);
}

/** Whether an If-None-Match's tags name `revision` (a read's 304). */
const noneMatch = (tags: ReturnType<typeof tagsOf> | null, revision: number) => tags !== null && (tags === '*' || tags.some((t) => t.revision === String(revision)));

/** The If-None-Match of a single read: null when absent; malformed is 400, before the record is read. */
const ifNoneMatch = (request: FastifyRequest) => {
  const header = request.headers['if-none-match'];
  return header === undefined ? null : tagsOf(String(header), 'If-None-Match');
};

/**
 * A single read, `{[key]: record}`, with the ETag of the revision its row holds (one read: a
 * missing record is its 404); when If-None-Match names that ETag, the answer is 304 with no body.
 */
export async function readTagged<K extends string>(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  stream: string,
  key: K,
  read: () => Promise<TaggedRecord>,
): Promise<Record<K, Values>> {
  const tags = ifNoneMatch(request);
  const got = await read();
  // Not revisionOf: the row's own revision (nearly always there) needs no await.
  const revision = got.revision ?? (await revisionOfStream(services.log, stream));
  reply.header('ETag', `"${revision}"`);
  // Weak comparison for If-None-Match (RFC 9110).
  if (noneMatch(tags, revision)) return reply.code(304).send() as never;
  return { [key]: got.record } as Record<K, Values>;
}

/**
 * As readTagged, for a record its store gives as JSON text in the response schema's order
 * (projections/read.ts readTeamJsonTagged): the text is sent as it is, the bytes the schema's
 * serialiser would write, with no document made or serialised. Null when the store gives no
 * text (the caller reads with readTagged); else undefined once sent, or a promise when the row
 * lacks its revision: what a handler that is not async returns.
 */
export function readTaggedJson(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  stream: string,
  prefix: string,
  read: () => { json: string; revision: number | null } | null,
): Promise<void> | undefined | null {
  const tags = ifNoneMatch(request);
  const got = read();
  if (got === null) return null;
  const answer = (revision: number): undefined => {
    reply.header('ETag', `"${revision}"`);
    if (noneMatch(tags, revision)) reply.code(304).send();
    else reply.header('content-type', 'application/json; charset=utf-8').send(prefix + got.json + '}');
    return undefined;
  };
  return got.revision === null ? revisionOfStream(services.log, stream).then(answer) : answer(got.revision);
}

/** The text an answer `{[key]: <record>}` starts with, for readTaggedJson. */
export const jsonPrefix = (key: string) => `{${JSON.stringify(key)}:`;

import { createHash } from 'node:crypto';
import { CONSTITUENTS, activeByEmail, constituentsProjection } from '../projections/constituents.js';
import { newRecordDoc } from '../projections/records.js';
import { fromLog } from '../domain/events.js';
import { constituentEvolver, constituentStream } from '../domain/constituent/events.js';
import { decideCreate, decideErase, decideUpdate, validateCreate } from '../domain/constituent/decide.js';
import type { Values } from '../domain/shared/fields.js';
import { decideUpsert, stillMatches, type UpsertMatches, upsertEmail } from '../domain/constituent/upsert.js';
import { emailKey } from '../domain/shared/values.js';
import { recordBusy } from '../domain/shared/errors.js';
import type { Position } from '../domain/shared/events.js';
import { type Decided, handle } from './aggregate.js';
import { metadataOf, type WriteContext } from './context.js';
import { claimedRecord, createOnce } from './claims.js';
import type { CommandDeps } from './deps.js';
import { newId } from './resume.js';

export async function createConstituent(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  return (await create(deps, ctx, body)).id;
}

/**
 * A create answered with its record as the read model shows it once settled, made from the
 * appended events by the read model's own projector rather than read back (one read and parse
 * less per write). Reads after the answer see the same, read-your-writes being unchanged. The
 * document is the read model's, internal `_` fields included: the answer's response schema
 * writes the record's public fields only, as it does for a single read of the stored row.
 */
export async function createConstituentRecord(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<{ id: number; record: Values }> {
  const { id, stream, r } = await create(deps, ctx, body);
  return { id, record: await recordAfter(stream, r) };
}

/**
 * The record's document as the read model shows it once `r` is applied (its projector's own apply
 * over the stream's events up to r's: newRecordDoc), whatever was written to it since: the
 * answer of the write that made `r` (a batch's item, decisions.md §14).
 */
async function recordAfter(stream: string, r: Decided<unknown>): Promise<Values> {
  const next = r.prior.length ? r.prior[r.prior.length - 1].revision + 1n : 0n;
  // The record projector reads no position.
  const own = r.events.map((e, k) => ({ stream, revision: next + BigInt(k), position: r.position!, type: e.type, data: e.data, metadata: r.metadata! }));
  return (await newRecordDoc(constituentsProjection, [...r.prior, ...own].map(fromLog)))!;
}

async function create(deps: CommandDeps, ctx: WriteContext, body: Values) {
  const fields = validateCreate(body); // before an id is taken: a failed create writes nothing
  const id = await newId(deps, ctx, 'constituent', constituentStream);
  const stream = constituentStream(id);
  const r = await handle(deps.log, stream, constituentEvolver, ctx, (s) => decideCreate({ id, fields }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return { id, stream, r };
}

export async function updateConstituent(deps: CommandDeps, ctx: WriteContext, id: number, body: Values): Promise<void> {
  await update(deps, ctx, id, body);
}

async function update(deps: CommandDeps, ctx: WriteContext, id: number, body: Values) {
  const r = await handle(deps.log, constituentStream(id), constituentEvolver, ctx, (s) => decideUpdate({ id, team: ctx.team, body }, s));
  await deps.settle(r.position, ctx);
  return r;
}

const claimStream = (team: number, email: string) =>
  `constituent_email-${team}-${createHash('sha256').update(emailKey(email)).digest('hex').slice(0, 40)}`;

/**
 * Upsert by email: what to do with the matches is decideUpsert's (domain/constituent/upsert.ts);
 * this finds them, claims the email and writes.
 *
 * Concurrent upserts of a new email create exactly one constituent (commands/claims.ts): the
 * loser of the claim waits until the winner's constituent is readable and updates it instead.
 */
export async function upsertConstituentByEmail(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<{ id: number; created: boolean }> {
  const { id, created } = await upsert(deps, ctx, body);
  return { id, created };
}

/**
 * An upsert answered with its record as this upsert left it, made from its own events as a
 * create's is (createConstituentRecord), not read back: a batch's later item may have changed it
 * since (decisions.md §14: each item's answer is the single upsert's).
 */
export async function upsertConstituentRecord(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<{ id: number; created: boolean; record: Values }> {
  const { id, created, r } = await upsert(deps, ctx, body);
  return { id, created, record: await recordAfter(constituentStream(id), r) };
}

type Upserted = { id: number; created: boolean; r: Decided<unknown> };

function upsert(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<Upserted> {
  const email = upsertEmail(body);
  const create = async (id: number) => {
    const r = await handle(deps.log, constituentStream(id), constituentEvolver, ctx, (s) => decideCreate({ id, fields: validateCreate(body) }, s), { newStream: true });
    await deps.settle(r.position, ctx);
    return { id, created: true, r };
  };
  return createOnce<Upserted, 'constituent_email'>(deps, ctx, {
    stream: claimStream(ctx.team, email),
    category: 'constituent_email',
    idKind: 'constituent',
    recordStream: constituentStream,
    resolve: async (last) => {
      if (last) await waitUntilReadable(deps, ctx, last.data.constituentId);
      for (let attempt = 1; ; attempt++) {
        const decision = decideUpsert(email, await activeMatches(deps, ctx.team, email));
        if (decision.action === 'create') return null;
        try {
          return { id: decision.id, created: false, r: await updateMatch(deps, ctx, decision.id, email, body) };
        } catch (err) {
          if (!(err instanceof StaleMatch) || attempt >= MATCH_ATTEMPTS) throw err instanceof StaleMatch ? recordBusy() : err;
          // The read models now show what made it stale: match again there.
          await deps.settle(err.position, ctx);
        }
      }
    },
    beforeCreate: () => validateCreate(body),
    claim: (id) => ({ type: 'ConstituentEmailClaimed', data: { constituentId: id } }),
    create,
    resumeUpdate: async (id) => ({ id, created: false, r: await update(deps, ctx, id, body) }),
  });
}

/** How many times an upsert matches again after its match went stale (updateMatch) before answering 503 record_busy (nothing written, retryable). */
const MATCH_ATTEMPTS = 5;

/** The log has the matched record no longer matching (deleted, or changed by another write) at `position`. */
class StaleMatch extends Error {
  constructor(readonly position: Position) {
    super('the matched constituent no longer matches');
  }
}

/**
 * The upsert's update of its match (spec 4.1: the one active constituent with the email), decided
 * on the record's stream as the log has it. The match was picked in the read models, which may
 * not yet show a write that took it away since (a delete, an erasure, Email1 or
 * IsActiveConstituent changed: the read models had not applied it, or it came after the pick);
 * the update would then answer 404 naming an id the client never sent (a deleted record), or give
 * the upsert's email back to a record no longer having it. Such a match is StaleMatch, with
 * nothing written: the caller waits until the read models show the write that made it stale and
 * matches again (none now creates, two are ambiguous_match), at most MATCH_ATTEMPTS times, every
 * one of which follows another write to the email's matches. The decision is made on the state the
 * append expects, so a write racing in after it is a conflict, decided again (handle()). Nothing
 * more is read when nothing raced: the stream is the one the update reads anyway.
 */
async function updateMatch(deps: CommandDeps, ctx: WriteContext, id: number, email: string, body: Values) {
  const r = await handle(deps.log, constituentStream(id), constituentEvolver, ctx, (s, loaded) => {
    if (!stillMatches(s, ctx.team, email) && loaded.events.length) throw new StaleMatch(loaded.events[loaded.events.length - 1].position);
    return decideUpdate({ id, team: ctx.team, body }, s);
  });
  await deps.settle(r.position, ctx);
  return r;
}

/** Two ids are enough to tell one match from several; the total counts them all. */
async function activeMatches(deps: CommandDeps, team: number, email: string): Promise<UpsertMatches> {
  const found = await deps.store.find<{ PkConstituent: number }>({
    collection: CONSTITUENTS,
    filter: activeByEmail(team, email),
    page: { page: 1, pageSize: 2 },
  });
  return { total: found.total, ids: found.items.map((c) => c.PkConstituent) };
}

/** The claim's constituent, readable once its winner has written it (claimedRecord). */
async function waitUntilReadable(deps: CommandDeps, ctx: WriteContext, id: number): Promise<void> {
  const claimed = await claimedRecord(deps, constituentStream(id), constituentEvolver);
  // Null: the winner died between its claim and its create; the claim is stale, carry on without it.
  if (claimed) await deps.settle(claimed.position, ctx);
}

/**
 * decisions.md §17: records the erasure (ConstituentErased, the durable fact the purge of every
 * store follows: runtime/erasure.ts) and answers when it happened; again on an erased record, the
 * same answer with nothing written.
 */
export async function eraseConstituent(deps: CommandDeps, ctx: WriteContext, id: number, reason: string | null): Promise<{ erasedAt: string }> {
  const r = await handle(deps.log, constituentStream(id), constituentEvolver, ctx, (s) => decideErase({ id, team: ctx.team, reason }, s));
  await deps.settle(r.position, ctx);
  const erasedAt = r.events.length ? metadataOf(ctx).at : r.state.erasedAt;
  return { erasedAt: erasedAt ?? metadataOf(ctx).at };
}

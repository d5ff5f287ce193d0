import { createHash } from 'node:crypto';
import { CONSTITUENTS, activeByEmail, constituentsProjection } from '../projections/constituents.js';
import { newRecordDoc } from '../projections/records.js';
import { fromLog } from '../domain/events.js';
import { constituentEvolver, constituentStream } from '../domain/constituent/events.js';
import { decideCreate, decideErase, decideUpdate, validateCreate } from '../domain/constituent/decide.js';
import type { Values } from '../domain/shared/fields.js';
import { decideUpsert, type UpsertMatches, upsertEmail } from '../domain/constituent/upsert.js';
import { emailKey } from '../domain/shared/values.js';
import { handle } from './aggregate.js';
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
  const position = r.position!;
  const metadata = r.metadata!;
  // A new stream: its events are revisions 0, 1, ...; the record projector reads no position.
  const logged = r.events.map((e, k) => fromLog({ stream, revision: BigInt(k), position, type: e.type, data: e.data, metadata }));
  return { id, record: (await newRecordDoc(constituentsProjection, logged))! };
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
  const r = await handle(deps.log, constituentStream(id), constituentEvolver, ctx, (s) => decideUpdate({ id, team: ctx.team, body }, s));
  await deps.settle(r.position, ctx);
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
export async function upsertConstituentByEmail(
  deps: CommandDeps,
  ctx: WriteContext,
  body: Values,
): Promise<{ id: number; created: boolean }> {
  const email = upsertEmail(body);
  const create = async (id: number) => {
    const r = await handle(deps.log, constituentStream(id), constituentEvolver, ctx, (s) => decideCreate({ id, fields: validateCreate(body) }, s), { newStream: true });
    await deps.settle(r.position, ctx);
    return { id, created: true };
  };
  return createOnce<{ id: number; created: boolean }, 'constituent_email'>(deps, ctx, {
    stream: claimStream(ctx.team, email),
    category: 'constituent_email',
    idKind: 'constituent',
    recordStream: constituentStream,
    resolve: async (last) => {
      if (last) await waitUntilReadable(deps, ctx, last.data.constituentId);
      const decision = decideUpsert(email, await activeMatches(deps, ctx.team, email));
      if (decision.action === 'create') return null;
      await updateConstituent(deps, ctx, decision.id, body);
      return { id: decision.id, created: false };
    },
    beforeCreate: () => validateCreate(body),
    claim: (id) => ({ type: 'ConstituentEmailClaimed', data: { constituentId: id } }),
    create,
    resumeUpdate: async (id) => {
      await updateConstituent(deps, ctx, id, body);
      return { id, created: false };
    },
    busy: 'Too many concurrent upserts of this email; retry.',
  });
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

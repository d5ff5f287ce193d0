import { assertTeamRecord } from '../projections/read.js';
import { decideCreate, decideUpdate, validateCreate } from '../domain/volunteer/decide.js';
import { VOLUNTEER, volunteerClaimStream, volunteerEvolver, volunteerStream } from '../domain/volunteer/events.js';
import { decideDelete } from '../domain/shared/record.js';
import type { Values } from '../domain/shared/fields.js';
import { todayUtc } from '../domain/shared/values.js';
import { CONSTITUENTS } from '../projections/constituents.js';
import { and, eq } from '../projections/store/port.js';
import { VOLUNTEERS } from '../projections/volunteers.js';
import { unassignDeletedVolunteer } from './volunteer-tasks.js';
import { handle, UNTIL_DONE } from './aggregate.js';
import { cascadeContext, type WriteContext } from './context.js';
import { claimedRecord, createOnce } from './claims.js';
import { resuming } from './resume.js';
import { load } from '../eventlog/load.js';
import { constituentEvolver, constituentStream } from '../domain/constituent/events.js';
import { historyKind } from '../projections/history/kinds.js';
import { recordAsOf } from '../projections/history/read.js';
import type { CommandDeps } from './deps.js';

/**
 * Registers a constituent as a volunteer (spec 4.2): at most one volunteer per constituent, so a
 * second registration answers the existing record with created: false.
 *
 * Concurrent registrations of one constituent create exactly one volunteer (commands/claims.ts):
 * the losers find the winner's claim, wait until its volunteer exists and answer it. A claim
 * whose volunteer was deleted (or never written, the winner having died in between) may be
 * claimed again.
 *
 * A registration racing the delete of its constituent (spec 2.2: a volunteer is always an existing
 * constituent). The constituent's check above reads the read model, and the delete's cascade
 * (deleteVolunteerOfConstituent) finds the volunteers to delete in the read model too, so the
 * volunteer could be created after the check passed and made visible after the cascade looked:
 * a volunteer outliving its constituent. So once its VolunteerCreated is committed (at p) and the
 * read models include it (the settle), the registration reads the constituent's stream in the log
 * (one stream read, the only cost this adds to a registration) and, if it is deleted, deletes the
 * volunteer as the cascade does. With the delete's ConstituentDeleted committed at q:
 * - q committed before that read: the read sees it, the registration deletes its volunteer;
 * - q committed after it: then after p, so q follows p in the log. The delete's cascade looks
 *   only once the read models include q (its settle), so they include p, which is before it in
 *   the log they are projected in order from: the cascade finds the volunteer and deletes it.
 * One of the two always deletes the volunteer; when both do (q before the read, the cascade's
 * look after p is visible), the second decides nothing (deleteVolunteer): one volunteer.deleted.
 * A retry resuming a keyed registration whose earlier try died before its look looks again.
 *
 * The answer then: 201 created, with the volunteer as the registration wrote it (its revision 1,
 * the constituent's fields null, as the read models no longer have it). The log, the webhooks
 * (volunteer.created, then volunteer.deleted) and the answer all tell one order of the two
 * overlapping requests: registered, then deleted with its constituent, as when the delete comes
 * just after. Not 400 invalid_field: the registration did write (§7: a failed create writes
 * nothing), and receivers were told of the volunteer; the client learns of its end as any other
 * (volunteer.deleted, a read's 404). A registration that found the volunteer already registered
 * (created: false) wrote nothing and has nothing to undo.
 */
export async function registerVolunteer(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<Registered> {
  const today = todayUtc(ctx.now);
  const fields = validateCreate(body, today);
  const constituentId = fields.FkConstituent as number;
  // decisions.md 6; not asked again of a retry resuming its earlier try's write (commands/volunteer-tasks.ts checkRefs).
  if (!(await resuming(deps.log, ctx))) await assertTeamRecord(deps.store, CONSTITUENTS, ctx.team, constituentId, 'FkConstituent', 'a constituent');
  return createOnce<Registered, 'volunteer_constituent'>(deps, ctx, {
    stream: volunteerClaimStream(constituentId),
    category: 'volunteer_constituent',
    idKind: 'volunteer',
    recordStream: volunteerStream,
    resolve: async (last) => {
      const existing = last ? await claimedVolunteer(deps, last.data.volunteerId) : null;
      if (!existing) return null;
      await deps.settle(existing.position, ctx);
      return { id: last!.data.volunteerId, created: false };
    },
    claim: (id) => ({ type: 'VolunteerConstituentClaimed', data: { volunteerId: id, constituentId } }),
    create: async (id) => {
      const r = await handle(deps.log, volunteerStream(id), volunteerEvolver, ctx, (s) => decideCreate({ id, body, today }, s), { newStream: true });
      await deps.settle(r.position, ctx);
      // Its constituent deleted meanwhile: the delete's cascade, done here (the comment above).
      const record = await undoneWithConstituent(deps, ctx, id, constituentId);
      return record ? { id, created: true, record } : { id, created: true };
    },
  });
}

/**
 * A registration an earlier try committed (a batch retried with its key answers its items from
 * what that try wrote), looked at again: its look at its constituent (above) may have failed after
 * the commit, the try answering a 5xx, so it is made again; a no-op where the volunteer is gone or
 * its constituent still there (one or two stream reads).
 */
export async function recheckRegistration(deps: CommandDeps, ctx: WriteContext, id: number): Promise<Values | undefined> {
  const { state } = await load(deps.log, volunteerStream(id), volunteerEvolver);
  const constituentId = state.fields.FkConstituent;
  if (!state.exists || typeof constituentId !== 'number') return undefined;
  // Gone by the cascade since: the volunteer as the registration wrote it, as create answers.
  return state.deleted ? writtenVolunteer(deps, ctx, id) : undoneWithConstituent(deps, ctx, id, constituentId);
}

/**
 * A registration's look at its constituent (registerVolunteer): deleted, the volunteer it wrote is
 * deleted as the cascade does, and answered as it was written; undefined where the constituent stands.
 */
async function undoneWithConstituent(deps: CommandDeps, ctx: WriteContext, id: number, constituentId: number): Promise<Values | undefined> {
  if (!(await constituentGone(deps, constituentId))) return undefined;
  await deleteVolunteer(deps, cascadeContext(ctx), id);
  return writtenVolunteer(deps, ctx, id);
}

/** The volunteer as its registration wrote it (revision 1, from the log): what a registration undone by its constituent's delete answers. */
const writtenVolunteer = async (deps: CommandDeps, ctx: WriteContext, id: number) =>
  (await recordAsOf(deps.log, deps.store, historyKind('volunteer'), ctx.team, id, { revision: 1 })).doc;

/** A registration's answer; `record` is the volunteer as it wrote it, when it has been deleted since (above). */
export type Registered = { id: number; created: boolean; record?: Values };

/** The claimed volunteer once it exists and is not deleted; null when the claim is void. */
async function claimedVolunteer(deps: CommandDeps, id: number) {
  const claimed = await claimedRecord(deps, volunteerStream(id), volunteerEvolver);
  return claimed && !claimed.state.deleted ? { position: claimed.position } : null;
}

/** Status, suspension and flags; edits racing with other edits are decided again on fresh state. */
export async function updateVolunteer(deps: CommandDeps, ctx: WriteContext, id: number, body: Values): Promise<void> {
  const today = todayUtc(ctx.now);
  const r = await handle(deps.log, volunteerStream(id), volunteerEvolver, ctx, (s) => decideUpdate({ id, team: ctx.team, body, today }, s));
  await deps.settle(r.position, ctx);
}

/**
 * A volunteer is always an existing constituent (spec 2.2): deleting the constituent deletes its
 * volunteer too (volunteer.deleted), whose tasks then become unassigned (decisions.md 7). The
 * constituents record kind's afterDelete hook; the read store is current once the delete settled.
 * A registration racing the delete deletes its own volunteer the same way (registerVolunteer).
 */
export async function deleteVolunteerOfConstituent(deps: CommandDeps, ctx: WriteContext, constituentId: number): Promise<void> {
  const found = await deps.store.find<{ PkVolunteer: number }>({ collection: VOLUNTEERS, filter: and(eq('FkTeam', ctx.team), eq('FkConstituent', constituentId)) });
  for (const { PkVolunteer: id } of found.items) await deleteVolunteer(deps, ctx, id);
}

/**
 * The cascade's delete of one volunteer, then its tasks' unassignment. Idempotent: a volunteer
 * deleted already (by the other of a racing registration and constituent delete) decides nothing,
 * also when the two race on its stream (the loser decides again on fresh state), and a task it no
 * longer holds is left alone (decideVolunteerDeleted): one volunteer.deleted, never an error.
 */
async function deleteVolunteer(deps: CommandDeps, ctx: WriteContext, id: number): Promise<void> {
  const r = await handle(deps.log, volunteerStream(id), volunteerEvolver, ctx, (s) => (s.deleted ? [] : decideDelete(VOLUNTEER, s, ctx.team, 'volunteer', id, { consequence: true })), { budgetMs: UNTIL_DONE });
  await deps.settle(r.position, ctx);
  await unassignDeletedVolunteer(deps, ctx, id);
}

/**
 * Whether the constituent is deleted, as the log has it now: one stream read. Deleted by a delete
 * (whose cascade this stands in for), not by an erasure alone, which reads as deleted but keeps
 * the volunteer (decisions.md §17: linked records keep their own fields).
 */
async function constituentGone(deps: CommandDeps, id: number): Promise<boolean> {
  const { state, events } = await load(deps.log, constituentStream(id), constituentEvolver);
  return !state.exists || events.some((e) => e.type === 'ConstituentDeleted');
}

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
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import { claimedRecord, createOnce } from './claims.js';
import { resuming } from './resume.js';
import type { CommandDeps } from './deps.js';

/**
 * Registers a constituent as a volunteer (spec 4.2): at most one volunteer per constituent, so a
 * second registration answers the existing record with created: false.
 *
 * Concurrent registrations of one constituent create exactly one volunteer (commands/claims.ts):
 * the losers find the winner's claim, wait until its volunteer exists and answer it. A claim
 * whose volunteer was deleted (or never written, the winner having died in between) may be
 * claimed again.
 */
export async function registerVolunteer(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<{ id: number; created: boolean }> {
  const today = todayUtc(ctx.now);
  const fields = validateCreate(body, today);
  const constituentId = fields.FkConstituent as number;
  // decisions.md 6; not asked again of a retry resuming its earlier try's write (commands/volunteer-tasks.ts checkRefs).
  if (!(await resuming(deps.log, ctx))) await assertTeamRecord(deps.store, CONSTITUENTS, ctx.team, constituentId, 'FkConstituent', 'a constituent');
  return createOnce<{ id: number; created: boolean }, 'volunteer_constituent'>(deps, ctx, {
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
      return { id, created: true };
    },
  });
}

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
 */
export async function deleteVolunteerOfConstituent(deps: CommandDeps, ctx: WriteContext, constituentId: number): Promise<void> {
  const found = await deps.store.find<{ PkVolunteer: number }>({ collection: VOLUNTEERS, filter: and(eq('FkTeam', ctx.team), eq('FkConstituent', constituentId)) });
  for (const { PkVolunteer: id } of found.items) {
    const r = await handle(deps.log, volunteerStream(id), volunteerEvolver, ctx, (s) => (s.deleted ? [] : decideDelete(VOLUNTEER, s, ctx.team, 'volunteer', id, { consequence: true })));
    await deps.settle(r.position, ctx);
    await unassignDeletedVolunteer(deps, ctx, id);
  }
}

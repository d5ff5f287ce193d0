import { assertTeamRecord } from '../projections/read.js';
import {
  decideCancel,
  decideCreate,
  decideGeography,
  decideSignUp,
  decideUpdate,
  decideVolunteerDeleted,
  taskBusy,
  validateCreate,
} from '../domain/volunteer-task/decide.js';
import { ASSIGNED, type TaskAssigned, type TaskState, isAssignmentEvent, taskEvolver, taskStream } from '../domain/volunteer-task/events.js';
import { volunteerEvolver, volunteerStream } from '../domain/volunteer/events.js';
import { load } from '../eventlog/load.js';
import { TASK_FIELDS, TASK_GEOGRAPHY_FIELDS, TASK_READ_ONLY } from '../domain/volunteer-task/rules.js';
import { normaliseFields, type Values } from '../domain/shared/fields.js';
import { todayUtc } from '../domain/shared/values.js';
import { assertLookup } from '../projections/lookups.js';
import { TASK_GROUPS } from '../projections/task-groups.js';
import { VOLUNTEER_TASKS } from '../projections/volunteer-tasks.js';
import { VOLUNTEERS } from '../projections/volunteers.js';
import { and, eq } from '../projections/store/port.js';
import { type DomainEvent } from '../domain/shared/events.js';
import { type HandleOptions, handle, UNTIL_DONE } from './aggregate.js';
import { cascadeContext, type WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
import { newId, resuming } from './resume.js';
import { NO_STREAM } from '../eventlog/port.js';

/**
 * Ids of other records and lookups must be the team's own: invalid_field naming the field
 * (decisions.md 3). Not asked again of a keyed write's retry that resumes what its earlier try
 * wrote: that try passed them, and a record referred to that went since does not undo its write.
 */
async function checkRefs(deps: CommandDeps, ctx: WriteContext, f: Values): Promise<void> {
  if (await resuming(deps.log, ctx)) return;
  const team = ctx.team;
  await assertLookup(deps.store, team, 'categories', f.FkCategory, 'FkCategory');
  await assertLookup(deps.store, team, 'outcomes', f.FkOutcome, 'FkOutcome');
  await assertLookup(deps.store, team, 'districts', f.FkDistrict, 'FkDistrict');
  await assertLookup(deps.store, team, 'precincts', f.FkPrecinct, 'FkPrecinct');
  await assertTeamRecord(deps.store, TASK_GROUPS, team, f.FkTaskGroup, 'FkTaskGroup', 'a task group');
  await assertTeamRecord(deps.store, VOLUNTEERS, team, f.FkVolunteer, 'FkVolunteer', 'a volunteer');
}

/**
 * The assignment rules under concurrency (spec 3), built on the expected-revision append rather
 * than on a lock held by one process, so they hold across processes sharing the log:
 * - a claim (ifOpen=true or the sign-up) that loses the append race is decided again on fresh
 *   state, where the winner's assignment makes it not_open: of many racing claims one wins;
 * - any other change of FkVolunteer that lost its race to an assignment or unassignment is
 *   task_busy, with nothing written;
 * - everything else (field edits, or a change of FkVolunteer that only raced with field edits)
 *   is decided again on fresh state.
 */
async function decideTask(deps: CommandDeps, ctx: WriteContext, id: number, claim: boolean, decide: (s: TaskState) => DomainEvent[]) {
  let touchesVolunteer = false;
  const options: HandleOptions<TaskState> = {
    onConflict(fresh, conflict) {
      if (claim || !touchesVolunteer) return;
      const seen = conflict.expected === NO_STREAM ? -1n : (conflict.expected as bigint);
      if (fresh.events.some((e) => e.revision > seen && isAssignmentEvent(e.type))) throw taskBusy(id);
    },
  };
  const r = await handle(
    deps.log,
    taskStream(id),
    taskEvolver,
    ctx,
    (s) => {
      const events = decide(s);
      touchesVolunteer = events.some((e) => isAssignmentEvent(e.type));
      return events;
    },
    options,
  );
  await deps.settle(r.position, ctx);
  await unassignIfVolunteerGone(deps, ctx, id, r.events);
}

/**
 * A deleted volunteer holds no task (decisions.md 7), also when the assignment raced the delete.
 * The assignment checks its volunteer in the read model (checkRefs) and the delete's cascade
 * (unassignDeletedVolunteer) finds the volunteer's tasks in the read model too, so an assignment
 * written after the check and readable after the cascade looked escaped both. So a write that
 * assigned a volunteer (VolunteerTaskAssigned: a create or PATCH with FkVolunteer, a sign-up),
 * once committed (at p) and settled, reads that volunteer's stream (one stream read, only for
 * such writes) and, if it is deleted, unassigns it as the cascade does. With the delete's
 * VolunteerDeleted committed at q: before that read, the read sees it; after it, q follows p in
 * the log, and the cascade looks once the read models include q, so p too: it finds the task.
 * When both get there, the second decides nothing (decideVolunteerDeleted: the task no longer
 * held by that volunteer). The write answers the task as it is then: unassigned, as when the
 * delete comes just after (volunteer_task.signed_up, then volunteer_task.unassigned).
 */
async function unassignIfVolunteerGone(deps: CommandDeps, ctx: WriteContext, id: number, events: DomainEvent[]): Promise<void> {
  const assigned = events.findLast((e) => e.type === ASSIGNED) as TaskAssigned | undefined;
  if (assigned) await unassignIfGone(deps, ctx, id, assigned.data.volunteerId);
}

/** Unassigns the task from its volunteer, as the volunteer delete's cascade does, where the log has that volunteer gone (one stream read). */
async function unassignIfGone(deps: CommandDeps, ctx: WriteContext, id: number, volunteerId: number): Promise<void> {
  const { state } = await load(deps.log, volunteerStream(volunteerId), volunteerEvolver);
  if (!state.exists || state.deleted) await unassignTask(deps, cascadeContext(ctx), id, volunteerId);
}

/**
 * A task write an earlier try committed (a batch retried with its key answers its items from what
 * that try wrote), looked at again: its look at the volunteer it assigned (unassignIfVolunteerGone)
 * may have failed after the commit, the try answering a 5xx, so it is made again for the volunteer
 * the task holds; a no-op where it holds none or one still there.
 */
export async function recheckAssignment(deps: CommandDeps, ctx: WriteContext, id: number): Promise<undefined> {
  const { state } = await load(deps.log, taskStream(id), taskEvolver);
  const volunteerId = state.fields.FkVolunteer;
  if (state.exists && !state.deleted && typeof volunteerId === 'number') await unassignIfGone(deps, ctx, id, volunteerId);
  return undefined;
}

async function unassignTask(deps: CommandDeps, ctx: WriteContext, id: number, volunteerId: number): Promise<void> {
  const r = await handle(deps.log, taskStream(id), taskEvolver, ctx, (s) => decideVolunteerDeleted({ id, volunteerId }, s), { budgetMs: UNTIL_DONE });
  await deps.settle(r.position, ctx);
}

export async function createTask(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  await checkRefs(deps, ctx, validateCreate(body));
  const id = await newId(deps, ctx, 'volunteer_task', taskStream); // only after validation: a failed create writes nothing
  const today = todayUtc(ctx.now);
  await decideTask(deps, ctx, id, false, (s) => decideCreate({ id, body, today }, s));
  return id;
}

export async function updateTask(deps: CommandDeps, ctx: WriteContext, id: number, body: Values, ifOpen: boolean): Promise<void> {
  await checkRefs(deps, ctx, normaliseFields(TASK_FIELDS, body, TASK_READ_ONLY));
  const today = todayUtc(ctx.now);
  await decideTask(deps, ctx, id, ifOpen, (s) => decideUpdate({ id, team: ctx.team, body, ifOpen, today }, s));
}

export async function signUpForTask(deps: CommandDeps, ctx: WriteContext, id: number, volunteerId: number): Promise<void> {
  await checkRefs(deps, ctx, { FkVolunteer: volunteerId });
  const today = todayUtc(ctx.now);
  await decideTask(deps, ctx, id, true, (s) => decideSignUp({ id, team: ctx.team, volunteerId, today }, s));
}

export async function cancelTask(deps: CommandDeps, ctx: WriteContext, id: number, volunteerId?: number): Promise<void> {
  await decideTask(deps, ctx, id, false, (s) => decideCancel({ id, team: ctx.team, volunteerId }, s));
}

export async function setTaskGeography(deps: CommandDeps, ctx: WriteContext, id: number, body: Values): Promise<void> {
  await checkRefs(deps, ctx, normaliseFields(TASK_GEOGRAPHY_FIELDS, body));
  await decideTask(deps, ctx, id, false, (s) => decideGeography({ id, team: ctx.team, body }, s));
}

/** A deleted volunteer's tasks become unassigned (decisions.md 7): the registry's afterDelete hook; an assignment racing it unassigns itself (unassignIfVolunteerGone). */
export async function unassignDeletedVolunteer(deps: CommandDeps, ctx: WriteContext, volunteerId: number): Promise<void> {
  const held = await deps.store.find<{ PkTask: number }>({
    collection: VOLUNTEER_TASKS,
    filter: and(eq('FkTeam', ctx.team), eq('FkVolunteer', volunteerId)),
  });
  for (const t of held.items) await unassignTask(deps, ctx, t.PkTask, volunteerId);
}

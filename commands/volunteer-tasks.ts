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
import { type TaskState, isAssignmentEvent, taskEvolver, taskStream } from '../domain/volunteer-task/events.js';
import { TASK_FIELDS, TASK_GEOGRAPHY_FIELDS, TASK_READ_ONLY } from '../domain/volunteer-task/rules.js';
import { normaliseFields, type Values } from '../domain/shared/fields.js';
import { todayUtc } from '../domain/shared/values.js';
import { assertLookup } from '../projections/lookups.js';
import { TASK_GROUPS } from '../projections/task-groups.js';
import { VOLUNTEER_TASKS } from '../projections/volunteer-tasks.js';
import { VOLUNTEERS } from '../projections/volunteers.js';
import { and, eq } from '../projections/store/port.js';
import { type DomainEvent } from '../domain/shared/events.js';
import { type HandleOptions, handle } from './aggregate.js';
import type { WriteContext } from './context.js';
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

/** A deleted volunteer's tasks become unassigned (decisions.md 7): the registry's afterDelete hook. */
export async function unassignDeletedVolunteer(deps: CommandDeps, ctx: WriteContext, volunteerId: number): Promise<void> {
  const held = await deps.store.find<{ PkTask: number }>({
    collection: VOLUNTEER_TASKS,
    filter: and(eq('FkTeam', ctx.team), eq('FkVolunteer', volunteerId)),
  });
  for (const t of held.items) {
    const r = await handle(deps.log, taskStream(t.PkTask), taskEvolver, ctx, (s) => decideVolunteerDeleted({ id: t.PkTask, volunteerId }, s));
    await deps.settle(r.position, ctx);
  }
}

import { constituentEvolver } from '../domain/constituent/events.js';
import { taskGroupEvolver } from '../domain/task-group/events.js';
import { taskEvolver } from '../domain/volunteer-task/events.js';
import { volunteerEvolver } from '../domain/volunteer/events.js';
import { unassignDeletedVolunteer } from './volunteer-tasks.js';
import { deleteVolunteerOfConstituent } from './volunteers.js';
import { eventTicketEvolver } from '../domain/event-ticket/events.js';
import { eventEvolver } from '../domain/event/events.js';
import { type RecordState, decideDelete, decideLock } from '../domain/shared/record.js';
import type { Evolver } from '../domain/shared/events.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

/**
 * Record kinds the application surface can lock, delete and show the history of, by their path
 * segment. Aggregates whose state extends RecordState register here.
 */
export interface RecordKind {
  /** Path segment under /admin/v1/teams/:teamId/ */
  path: string;
  /** Stream category: `constituent` for `constituent-12` */
  category: string;
  /** Event type prefix */
  prefix: string;
  /** Human name in messages */
  what: string;
  evolver: Evolver<RecordState>;
  lockable: boolean;
  deletable: boolean;
  /** Extra decisions a delete entails (a deleted volunteer's tasks become unassigned, ...). */
  afterDelete?: (deps: CommandDeps, ctx: WriteContext, id: number) => Promise<void>;
}

const kinds = new Map<string, RecordKind>();

export function registerRecordKind(kind: RecordKind): void {
  kinds.set(kind.path, kind);
}

export const recordKind = (path: string) => kinds.get(path);
export const recordKinds = () => [...kinds.values()];

registerRecordKind({ path: 'constituents', category: 'constituent', prefix: 'Constituent', what: 'constituent', evolver: constituentEvolver, lockable: true, deletable: true, afterDelete: deleteVolunteerOfConstituent });
registerRecordKind({ path: 'volunteers', category: 'volunteer', prefix: 'Volunteer', what: 'volunteer', evolver: volunteerEvolver, lockable: true, deletable: true, afterDelete: unassignDeletedVolunteer });
registerRecordKind({ path: 'volunteer-tasks', category: 'volunteer_task', prefix: 'VolunteerTask', what: 'volunteer task', evolver: taskEvolver, lockable: true, deletable: true });
registerRecordKind({ path: 'volunteer-task-groups', category: 'volunteer_task_group', prefix: 'VolunteerTaskGroup', what: 'volunteer task group', evolver: taskGroupEvolver, lockable: false, deletable: false });
registerRecordKind({ path: 'events', category: 'event', prefix: 'Event', what: 'event', evolver: eventEvolver, lockable: true, deletable: true });
// Ticket sales are recorded, never edited through /admin/v1; registered for their history only.
registerRecordKind({ path: 'event-tickets', category: 'event_ticket', prefix: 'EventTicket', what: 'event ticket sale', evolver: eventTicketEvolver, lockable: false, deletable: false });

export async function lockRecord(deps: CommandDeps, ctx: WriteContext, kind: RecordKind, id: number, lock: boolean): Promise<void> {
  const r = await handle(deps.log, `${kind.category}-${id}`, kind.evolver, ctx, (s) => decideLock(kind.prefix, s, ctx.team, kind.what, id, lock));
  await deps.settle(r.position);
}

export async function deleteRecord(deps: CommandDeps, ctx: WriteContext, kind: RecordKind, id: number): Promise<void> {
  const r = await handle(deps.log, `${kind.category}-${id}`, kind.evolver, ctx, (s) => decideDelete(kind.prefix, s, ctx.team, kind.what, id));
  await deps.settle(r.position);
  await kind.afterDelete?.(deps, ctx, id);
}

import { RESOURCES, type Resource, streamOf } from '../domain/resources.js';
import { unassignDeletedVolunteer } from './volunteer-tasks.js';
import { deleteVolunteerOfConstituent } from './volunteers.js';
import { decideDelete, decideLock } from '../domain/shared/record.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

/**
 * Record kinds the application surface can lock, delete and show the history of, by their path
 * segment: a resource of domain/resources.ts, and what a delete entails beyond the record.
 */
export interface RecordKind extends Pick<Resource, 'path' | 'category' | 'prefix' | 'what' | 'evolver' | 'lockable' | 'deletable'> {
  /** Extra decisions a delete entails (a deleted volunteer's tasks become unassigned, ...). */
  afterDelete?: (deps: CommandDeps, ctx: WriteContext, id: number) => Promise<void>;
}

const kinds = new Map<string, RecordKind>();

export function registerRecordKind(kind: RecordKind): void {
  kinds.set(kind.path, kind);
}

export const recordKind = (path: string) => kinds.get(path);
export const recordKinds = () => [...kinds.values()];

registerRecordKind({ ...RESOURCES.constituent, afterDelete: deleteVolunteerOfConstituent });
registerRecordKind({ ...RESOURCES.volunteer, afterDelete: unassignDeletedVolunteer });
registerRecordKind(RESOURCES.volunteerTask);
registerRecordKind(RESOURCES.taskGroup);
registerRecordKind(RESOURCES.event);
registerRecordKind(RESOURCES.eventTicket);

export async function lockRecord(deps: CommandDeps, ctx: WriteContext, kind: RecordKind, id: number, lock: boolean): Promise<void> {
  const r = await handle(deps.log, streamOf(kind, id), kind.evolver, ctx, (s) => decideLock(kind.prefix, s, ctx.team, kind.what, id, lock));
  await deps.settle(r.position, ctx);
}

export async function deleteRecord(deps: CommandDeps, ctx: WriteContext, kind: RecordKind, id: number): Promise<void> {
  const r = await handle(deps.log, streamOf(kind, id), kind.evolver, ctx, (s) => decideDelete(kind.prefix, s, ctx.team, kind.what, id));
  await deps.settle(r.position, ctx);
  await kind.afterDelete?.(deps, ctx, id);
}

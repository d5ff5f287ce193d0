import { type DeletableResource, RESOURCES, type Resource, type ResourceName, streamOf } from '../domain/resources.js';
import { unassignDeletedVolunteer } from './volunteer-tasks.js';
import { deleteVolunteerOfConstituent } from './volunteers.js';
import { decideDelete, decideLock } from '../domain/shared/record.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

/** Extra decisions a delete entails (a deleted volunteer's tasks become unassigned, ...). */
type AfterDelete = (deps: CommandDeps, ctx: WriteContext, id: number) => Promise<void>;

/**
 * Record kinds the admin surface can lock, delete and show the log history of, by their path
 * segment: a resource of domain/resources.ts, and what a delete entails beyond the record.
 */
export interface RecordKind extends Pick<Resource, 'path' | 'category' | 'prefix' | 'what' | 'evolver' | 'lockable' | 'deletable'> {
  afterDelete?: AfterDelete;
}

/** What deleting each deletable resource entails beyond the record; the compiler asks for every one. */
const CASCADES: { [K in DeletableResource]: AfterDelete | null } = {
  constituent: deleteVolunteerOfConstituent,
  volunteer: unassignDeletedVolunteer,
  volunteerTask: null,
  event: null,
  donation: null,
};

const kinds = new Map<string, RecordKind>(
  (Object.keys(RESOURCES) as ResourceName[]).flatMap((name) => {
    const r = RESOURCES[name];
    if (!r.admin) return [];
    const afterDelete = (CASCADES as Partial<Record<ResourceName, AfterDelete | null>>)[name] ?? undefined;
    return [[r.path, afterDelete ? { ...r, afterDelete } : r]];
  }),
);

export const recordKind = (path: string) => kinds.get(path);
export const recordKinds = () => [...kinds.values()];

export async function lockRecord(deps: CommandDeps, ctx: WriteContext, kind: RecordKind, id: number, lock: boolean): Promise<void> {
  const r = await handle(deps.log, streamOf(kind, id), kind.evolver, ctx, (s) => decideLock(kind.prefix, s, ctx.team, kind.what, id, lock));
  await deps.settle(r.position, ctx);
}

export async function deleteRecord(deps: CommandDeps, ctx: WriteContext, kind: RecordKind, id: number): Promise<void> {
  const r = await handle(deps.log, streamOf(kind, id), kind.evolver, ctx, (s) => decideDelete(kind.prefix, s, ctx.team, kind.what, id));
  await deps.settle(r.position, ctx);
  await kind.afterDelete?.(deps, ctx, id);
}

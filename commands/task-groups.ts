import { decideCreateGroup, taskGroupEvolver, taskGroupStream, validateCreateGroup } from '../domain/task-group/events.js';
import type { Values } from '../domain/shared/fields.js';
import { assertLookup } from '../projections/lookups.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

export async function createTaskGroup(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  const fields = validateCreateGroup(body);
  await assertLookup(deps.store, ctx.team, 'districts', fields.FkDistrict, 'FkDistrict');
  await assertLookup(deps.store, ctx.team, 'precincts', fields.FkPrecinct, 'FkPrecinct');
  const id = await deps.ids.next('volunteer_task_group'); // only after validation: a failed create writes nothing
  const r = await handle(deps.log, taskGroupStream(id), taskGroupEvolver, ctx, (s) => decideCreateGroup({ id, body }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return id;
}

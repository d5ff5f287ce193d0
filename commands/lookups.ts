import { decideAddLookup, validateLookupName, type LookupList, lookupEvolver, lookupStream } from '../domain/lookup/events.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

export async function addLookup(deps: CommandDeps, ctx: WriteContext, list: LookupList, name: unknown): Promise<number> {
  validateLookupName(name); // before an id is taken: a failed create writes nothing
  const id = await deps.ids.next('lookup');
  const r = await handle(deps.log, lookupStream(ctx.team), lookupEvolver, ctx, (s) => decideAddLookup({ list, id, name }, s));
  await deps.settle(r.position, ctx);
  return id;
}

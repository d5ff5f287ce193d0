import { decideCancelRecurringGift, decideStartRecurringGift, validateRecurringGift } from '../domain/recurring-gift/decide.js';
import { recurringGiftEvolver, recurringGiftStream } from '../domain/recurring-gift/events.js';
import type { Values } from '../domain/shared/fields.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
import { checkDonor } from './donations.js';

export async function startRecurringGift(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  const fields = validateRecurringGift(body, ctx.now);
  await checkDonor(deps, ctx.team, fields.FkConstituent);
  const id = await deps.ids.next('recurring_gift');
  const r = await handle(deps.log, recurringGiftStream(id), recurringGiftEvolver, ctx, (s) => decideStartRecurringGift({ id, fields }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return id;
}

export async function cancelRecurringGift(deps: CommandDeps, ctx: WriteContext, id: number): Promise<void> {
  const r = await handle(deps.log, recurringGiftStream(id), recurringGiftEvolver, ctx, (s) => decideCancelRecurringGift({ id, team: ctx.team }, s));
  await deps.settle(r.position, ctx);
}

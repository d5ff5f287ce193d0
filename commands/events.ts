import { DEFAULT_NOTIFICATION_TEMPLATES, DEFAULT_PUBLIC_FORM } from '../domain/event/creation.js';
import { decideCreate, decideGeography, decideUpdate, validateCreate, validateGeography, validateUpdate } from '../domain/event/decide.js';
import { eventEvolver, eventStream } from '../domain/event/events.js';
import { EVENT_LOOKUPS, GEOGRAPHY_LOOKUPS } from '../domain/event/rules.js';
import type { LookupList } from '../domain/lookup/events.js';
import type { Values } from '../domain/shared/fields.js';
import { assertLookup } from '../projections/lookups.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
import { newId } from './resume.js';

/** Every sent lookup id must be in the team's own list (decisions.md 3): invalid_field naming the field. */
async function assertLookups(deps: CommandDeps, team: number, fields: Values, lookups: ReadonlyArray<readonly [string, LookupList, ...unknown[]]>) {
  for (const [field, list] of lookups) if (field in fields) await assertLookup(deps.store, team, list, fields[field], field);
}

/** POST /events: everything, lookups included, is checked before an id is taken, so a failed create writes nothing. */
export async function createEvent(deps: CommandDeps, ctx: WriteContext, body: Values): Promise<number> {
  await assertLookups(deps, ctx.team, validateCreate(body), EVENT_LOOKUPS);
  const id = await newId(deps, ctx, 'event', eventStream);
  const r = await handle(deps.log, eventStream(id), eventEvolver, ctx, (s) =>
    decideCreate({ id, team: ctx.team, body, templates: DEFAULT_NOTIFICATION_TEMPLATES, formDefaults: DEFAULT_PUBLIC_FORM }, s),
    { newStream: true },
  );
  await deps.settle(r.position, ctx);
  return id;
}

export async function updateEvent(deps: CommandDeps, ctx: WriteContext, id: number, body: Values): Promise<void> {
  await assertLookups(deps, ctx.team, validateUpdate(body), EVENT_LOOKUPS);
  const r = await handle(deps.log, eventStream(id), eventEvolver, ctx, (s) => decideUpdate({ id, team: ctx.team, body }, s));
  await deps.settle(r.position, ctx);
}

/** The application's PATCH of the read-only geography (decisions.md 9). */
export async function setEventGeography(deps: CommandDeps, ctx: WriteContext, id: number, body: Values): Promise<void> {
  await assertLookups(deps, ctx.team, validateGeography(body), GEOGRAPHY_LOOKUPS);
  const r = await handle(deps.log, eventStream(id), eventEvolver, ctx, (s) => decideGeography({ id, team: ctx.team, body }, s));
  await deps.settle(r.position, ctx);
}

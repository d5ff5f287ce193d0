import { type DomainEvent, type Evolver, unknownEvent } from '../shared/events.js';
import { invalidField, missingField } from '../shared/errors.js';

/**
 * A team's own lists whose ids are used in Fk fields (spec 4.5). One stream per team,
 * `lookup-<team>`, with `LookupAdded {list, id, name}`.
 */
export const LOOKUP_LISTS = ['categories', 'outcomes', 'statuses', 'eventTypes', 'seasons', 'districts', 'precincts'] as const;
export type LookupList = (typeof LOOKUP_LISTS)[number];

export const isLookupList = (s: string): s is LookupList => (LOOKUP_LISTS as readonly string[]).includes(s);
export const lookupStream = (team: number) => `lookup-${team}`;

export type LookupEvent = DomainEvent<'LookupAdded', { list: LookupList; id: number; name: string }>;

export interface LookupState {
  names: Map<LookupList, Set<string>>;
}

export const lookupEvolver: Evolver<LookupState, LookupEvent> = {
  initial: () => ({ names: new Map() }),
  evolve(state, e) {
    switch (e.type) {
      case 'LookupAdded': {
        const names = new Map(state.names);
        names.set(e.data.list, new Set([...(names.get(e.data.list) ?? []), e.data.name.toLowerCase()]));
        return { names };
      }
      default:
        return unknownEvent(e.type, state);
    }
  },
};

/** A name appears once per list (case-insensitive), so integrators can tell entries apart. */
export function validateLookupName(raw: unknown): string {
  if (raw === undefined) throw missingField('name');
  if (typeof raw !== 'string' || raw.trim() === '') throw invalidField('name', 'name must be a non-empty string.');
  const name = raw.trim();
  if (name.length > 150) throw invalidField('name', 'name must be at most 150 characters.');
  return name;
}

export function decideAddLookup(cmd: { list: LookupList; id: number; name: unknown }, state: LookupState): LookupEvent[] {
  const name = validateLookupName(cmd.name);
  if (state.names.get(cmd.list)?.has(name.toLowerCase())) throw invalidField('name', `${cmd.list} already has an entry named "${name}".`);
  return [{ type: 'LookupAdded', data: { list: cmd.list, id: cmd.id, name } }];
}

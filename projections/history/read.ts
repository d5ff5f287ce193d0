import { ERASED, isErasedEvent } from '../../domain/constituent/events.js';
import { PERSONAL_FIELDS } from '../../domain/constituent/rules.js';
import { streamOf } from '../../domain/resources.js';
import { DomainError, notFound } from '../../domain/shared/errors.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Values } from '../../domain/shared/fields.js';
import type { RecordState } from '../../domain/shared/record.js';
import { writesOf } from '../../domain/shared/revision.js';
import { utcSecondsOf } from '../../domain/shared/values.js';
import type { EventLog } from '../../eventlog/port.js';
import type { ReadStore } from '../store/port.js';
import type { HistoryKind } from './kinds.js';
import { readRecordStream } from './stream-cache.js';

export interface HistoryEntry {
  revision: number;
  type: string;
  at: string;
  source: string;
  keyName: string | null;
  changes: Record<string, { from: unknown; to: unknown }>;
  /** decisions.md §17: on every entry of an erased constituent, whose personal fields read null. */
  erased?: true;
}

/** The record's stream grouped by write; another team's record, or none, is not found. */
async function writes(log: EventLog, kind: HistoryKind, team: number, id: number): Promise<RecordedEvent[][]> {
  const events = await readRecordStream(log, streamOf(kind, id));
  if (!events.length || events[0].metadata.team !== team) throw notFound(kind.what, id);
  return writesOf(events);
}

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * decisions.md §10: one entry per write, oldest first, every write included (those that fire no
 * webhook too), with the record's own fields it changed. A deleted record's history ends with
 * its deletion.
 */
export async function recordHistory(log: EventLog, kind: HistoryKind, team: number, id: number): Promise<HistoryEntry[]> {
  const out: HistoryEntry[] = [];
  let state = kind.evolver.initial();
  const all = await writes(log, kind, team, id);
  const erased = all.some((w) => w.some(isErasedEvent));
  for (const [i, write] of all.entries()) {
    const before = state;
    for (const e of write) state = kind.evolver.evolve(state, e);
    const [was, is] = [i === 0 ? {} : kind.own(before), kind.own(state)];
    const changes: HistoryEntry['changes'] = {};
    // An erased record's writes keep their shape (decisions.md §17): a personal field a write set
    // is listed, null to null, though its values are gone (the erasure nulls them in place).
    const named = erased ? namedPersonal(write) : NONE;
    for (const f of Object.keys(is)) if (!same(was[f] ?? null, is[f]) || named.has(f)) changes[f] = { from: i === 0 ? null : (was[f] ?? null), to: is[f] };
    const { at, source, keyName } = write[0].metadata;
    const entry: HistoryEntry = { revision: i + 1, type: typeOf(kind, write, i, before, state), at, source, keyName, changes };
    if (erased) entry.erased = true;
    out.push(entry);
  }
  return out;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The personal fields a write's events set (their `fields` or `changes`, which the erasure keeps
 * with null values: domain/constituent/erased.ts), where its record was erased.
 */
function namedPersonal(write: RecordedEvent[]): ReadonlySet<string> {
  const named = new Set<string>();
  for (const e of write) {
    const data = e.data as { fields?: unknown; changes?: unknown };
    for (const set of [data.fields, data.changes])
      if (set && typeof set === 'object') for (const f of Object.keys(set)) if (PERSONAL.has(f)) named.add(f);
  }
  return named;
}

const PERSONAL: ReadonlySet<string> = new Set(PERSONAL_FIELDS);

/** A person-event's own type, else created, deleted or updated (even where no webhook fires). */
function typeOf(kind: HistoryKind, write: RecordedEvent[], index: number, before: RecordState, after: RecordState): string {
  if (index === 0) return `${kind.resource}.created`;
  if (write.some((e) => e.type === ERASED)) return `${kind.resource}.erased`;
  if (after.deleted && !before.deleted) return `${kind.resource}.deleted`;
  for (const e of write) {
    const person = kind.personType?.(e);
    if (person) return person;
  }
  return `${kind.resource}.updated`;
}

/** Where an as-of read stops: at an instant (unix ms, inclusive), or after a revision. */
export type Point = { at: number } | { revision: number };

/**
 * decisions.md §10: the single read as the record stood at a point, folded from its stream by
 * the domain's evolver and shaped as the read model shapes it; the names looked up from linked
 * records are as they are now. Before its creation or after its deletion it is not found.
 */
export async function recordAsOf(
  log: EventLog,
  store: ReadStore,
  kind: HistoryKind,
  team: number,
  id: number,
  point: Point,
): Promise<{ doc: Values; revision: number; erased?: true }> {
  const all = await writes(log, kind, team, id);
  // A revision past the record's last: say so, rather than that there is no such record.
  if ('revision' in point && all.length && point.revision > all.length)
    throw new DomainError('not_found', `The ${kind.what} ${id} has no revision ${point.revision}; its latest is ${all.length}.`);
  const upTo = 'revision' in point ? point.revision : countUntil(all, point.at);
  let state = kind.evolver.initial();
  for (const write of all.slice(0, upTo)) for (const e of write) state = kind.evolver.evolve(state, e);
  if (!upTo || !state.exists || state.deleted) throw notFound(kind.what, id);
  const own = kind.own(state);
  const doc: Values = {
    [kind.idField]: id,
    FkTeam: team,
    ...own,
    ...(await kind.linked(own, team, store)),
    DateCreated: state.createdAt ? utcSecondsOf(state.createdAt) : null,
    DateLastModified: state.modifiedAt ? utcSecondsOf(state.modifiedAt) : null,
  };
  // decisions.md §17: an erased constituent's earlier revisions read with their personal fields null.
  return all.some((w) => w.some(isErasedEvent)) ? { doc, revision: upTo, erased: true } : { doc, revision: upTo };
}

/** How many writes were made at or before `at`. */
function countUntil(all: RecordedEvent[][], at: number): number {
  let n = 0;
  while (n < all.length && Date.parse(all[n][0].metadata.at) <= at) n++;
  return n;
}

import type { Category, EventsByCategory, LoggedEvent } from '../../domain/events.js';
import type { CollectionDef, ReadStore } from '../store/port.js';

export interface Projector<C extends Category = Category> {
  name: string;
  /**
   * The read model's schema version: raise it when what the projector writes changes (a field
   * added, a rule fixed); the embedded store then rebuilds this read model from the log at start.
   */
  version: number;
  collections: CollectionDef[];
  /**
   * The stream categories (`constituent` of `constituent-12`) whose events this projector reads.
   * Left out, it is given every event. The runner skips the others without calling `apply`.
   */
  categories?: readonly C[];
  /**
   * For some of its categories, the only event types it reads there: the runner skips that
   * category's other events without calling `apply` (those that follow a constituent for its
   * updates alone would otherwise be called for every create, the log's commonest event). A
   * category left out here is given all its events. Listing a type `apply` acts on is a bug no
   * compiler catches, so tests/projections/event-types.test.ts checks that `apply` does nothing
   * with the types left out.
   */
  eventTypes?: { readonly [K in C]?: readonly EventsByCategory[K]['type'][] };
  /**
   * Empties what the projector keeps outside its collections (a table of its own, written in
   * apply), when the embedded store rebuilds it (engine/sqlite-step.ts prepare).
   */
  reset?(): void;
  /**
   * The tables it keeps outside its collections (those `reset` empties), by name: a rebuild that
   * builds this projector apart (`independent`) copies them across with its collections.
   */
  tables?: readonly string[];
  /**
   * Reads nothing from the store and writes nothing another projector reads (an activity log, the
   * change feed: a row per event from the event alone). An offline rebuild of the embedded read
   * models (runtime/rebuild.ts) builds such projectors on a second thread, in a file of their own,
   * and copies what they wrote in at the end. One that reads a collection of another projector
   * fails that rebuild (the collection is unknown in its file), never silently.
   */
  independent?: boolean;
  /**
   * Writes what the projector held back while building from nothing (an offline rebuild, which
   * calls it once the whole log is applied, in a transaction): a projector made for such a
   * build may write in bigger pieces than event by event.
   */
  endBulk?(): void;
  /**
   * Told at the start of every step of the embedded driver (engine/sqlite-step.ts), before its
   * events: `many` when the step holds enough events that the projector may hold its writes back
   * and write them in bigger pieces at `endStep`, as endBulk does. Whatever it held from a step
   * that failed (rolled back, so endStep never came) is dropped here.
   */
  startStep?(many: boolean): void;
  /**
   * Writes what the projector held back in this step, in the step's transaction, before its
   * checkpoint: what it leaves must read exactly as the same events applied one at a time.
   */
  endStep?(): void;
  /** Applies one event of its categories. Must be idempotent: a redelivered event changes nothing. */
  apply(event: LoggedEvent<C>, store: ReadStore): Promise<void>;
}

/**
 * The projectors that read an event, by its stream's category (`constituent` of `constituent-12`)
 * and type, in the order given, worked out once per category and type: every event goes only to
 * the projectors that read it.
 */
export function eventRouter<P extends Pick<Projector, 'categories' | 'eventTypes'>>(projectors: readonly P[]): (stream: string, type: string) => P[] {
  // A category none of whose projectors lists its types routes by category alone (no `byType`).
  const routes = new Map<string, { all: P[]; byType: Map<string, P[]> | null }>();
  return (stream, type) => {
    const dash = stream.indexOf('-');
    const category = dash < 0 ? stream : stream.slice(0, dash);
    let route = routes.get(category);
    if (!route) {
      const all = projectors.filter((p) => !p.categories || (p.categories as readonly string[]).includes(category));
      const typed = all.some((p) => typesOf(p, category));
      routes.set(category, (route = { all, byType: typed ? new Map() : null }));
    }
    if (!route.byType) return route.all;
    let ps = route.byType.get(type);
    if (!ps) route.byType.set(type, (ps = route.all.filter((p) => typesOf(p, category)?.includes(type) ?? true)));
    return ps;
  };
}

function typesOf(p: Pick<Projector, 'eventTypes'>, category: string): readonly string[] | undefined {
  return (p.eventTypes as Record<string, readonly string[] | undefined> | undefined)?.[category];
}

import { DomainError } from '../domain/shared/errors.js';
import type { DomainEvent } from '../domain/shared/events.js';
import { metadataOf, type WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';
import { lastEvent } from '../eventlog/load.js';
import { NO_STREAM, WrongExpectedRevision } from '../eventlog/port.js';
import { type RecordedEvent } from '../domain/shared/events.js';

export interface CreateOnce<T> {
  /** The claim stream of the unique key (an email, a constituent). */
  stream: string;
  /** The id kind of the record created. */
  idKind: string;
  /** What the latest claim (none at first) resolves to without creating; null to create. */
  resolve: (last: RecordedEvent | undefined) => Promise<T | null>;
  /** Last checks before an id is taken: a failed create writes nothing. */
  beforeCreate?: () => void;
  /** The claim naming the id about to be created. */
  claim: (id: number) => DomainEvent;
  create: (id: number) => Promise<T>;
  /** The message when the key stays contended past every attempt. */
  busy: string;
}

/**
 * Uniqueness without a lock held in one process (one constituent per upserted email, one
 * volunteer per constituent). Before creating, a writer appends a claim naming its new id to the
 * key's claim stream, expecting the revision it read. Of racing writers one append wins; the
 * others start over, read the winner's claim and resolve to the winner's record instead.
 */
export async function createOnce<T>(deps: CommandDeps, ctx: WriteContext, o: CreateOnce<T>): Promise<T> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const last = await lastEvent(deps.log, o.stream);
    const resolved = await o.resolve(last);
    if (resolved !== null) return resolved;
    o.beforeCreate?.();
    const id = await deps.ids.next(o.idKind);
    try {
      await deps.log.append(o.stream, [{ ...o.claim(id), metadata: metadataOf(ctx) }], last ? last.revision : NO_STREAM);
    } catch (err) {
      if (err instanceof WrongExpectedRevision) continue;
      throw err;
    }
    return o.create(id);
  }
  throw new DomainError('task_busy', o.busy);
}

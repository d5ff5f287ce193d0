import { createHash } from 'node:crypto';
import type { CollectionDef, ReadStore } from '../store/port.js';
import type { Projector } from './projector.js';

/**
 * Blue/green read models on a shared store (MongoDB): each build names its read models by their
 * projectors' versions, reads and writes only those, and says which it uses in a registration
 * renewed on a heartbeat, so that an operator's `turnout rebuild --drop-unused` drops only the
 * collections no live process names (docs/production.md, "A new read-model version").
 */

/** The registrations: one per process, renewed every HEARTBEAT_MS; the store deletes those long dead. */
export const READ_MODEL_USERS: CollectionDef = { name: 'readModelUsers', idField: 'id', expireAfter: { field: 'seenAt', seconds: 86_400 } };

export const HEARTBEAT_MS = 30_000;
/** A registration not renewed for this long is of a process gone (three heartbeats missed). */
export const LIVE_FOR_MS = 3 * HEARTBEAT_MS;

export interface ReadModelUser {
  id: string;
  /** The build's name for its versions (buildOf). */
  build: string;
  projectors: Array<{ name: string; version: number }>;
  /** Every read-model collection it reads, by name and version. */
  collections: Array<{ name: string; version: number }>;
  seenAt: Date;
}

/** A short, stable name for a set of projector versions: builds with the same versions share it. */
export function buildOf(projectors: readonly Projector[]): string {
  const versions = projectors.map((p) => `${p.name}@${p.version}`).sort();
  return createHash('sha256').update(versions.join(',')).digest('hex').slice(0, 12);
}

/** The summary checkpoint of a build: where every one of its projectors is (step.ts StepOptions.summary). */
export const summaryOf = (projectors: readonly Projector[]): string => `read-models@${buildOf(projectors)}`;

export function usedCollections(projectors: readonly Projector[]): ReadModelUser['collections'] {
  return projectors.flatMap((p) => p.collections.map((c) => ({ name: c.name, version: p.version })));
}

/**
 * Registers this process's read models now and on every heartbeat until stopped. A failed
 * renewal is told and tried again at the next beat: the registration lives LIVE_FOR_MS.
 */
export async function registerReadModels(
  store: ReadStore,
  projectors: readonly Projector[],
  id: string,
  report: (message: string) => void,
  now: () => Date = () => new Date(),
): Promise<{ stop(): Promise<void> }> {
  await store.defineCollection(READ_MODEL_USERS);
  const user = (): ReadModelUser => ({
    id,
    build: buildOf(projectors),
    projectors: projectors.map((p) => ({ name: p.name, version: p.version })),
    collections: usedCollections(projectors),
    seenAt: now(),
  });
  await store.put(READ_MODEL_USERS.name, { ...user() });
  const timer = setInterval(() => {
    store.put(READ_MODEL_USERS.name, { ...user() }).catch((err) => report(`read-model registration: ${err instanceof Error ? err.message : String(err)}; renewed at the next heartbeat`));
  }, HEARTBEAT_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      // Gone at once rather than after LIVE_FOR_MS: a drop right after a deploy need not wait.
      await store.remove(READ_MODEL_USERS.name, id).catch(() => undefined);
    },
  };
}

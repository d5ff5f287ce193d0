import type { Db } from 'mongodb';

/**
 * How MongoDB names a read model's collection: after its projector's version, so that two builds
 * with different versions of one read model (a rolling deploy) each keep theirs
 * (docs/production.md). A collection without a version (webhook deliveries, replays) keeps its name.
 */
export const versionedName = (name: string, version?: number): string => (version === undefined ? name : `${name}.v${version}`);

const VERSIONED = /^(.+)\.v(\d+)$/;

/** The read model and version a collection's name gives (`changeFeed.v2`), or undefined for one without a version. */
export const versionOf = (physical: string): { name: string; version: number } | undefined => {
  const m = VERSIONED.exec(physical);
  return m ? { name: m[1], version: Number(m[2]) } : undefined;
};

export interface Registration {
  build: string;
  projectors: Array<{ name: string; version: number }>;
  collections: Array<{ name: string; version: number }>;
  seenAt: Date;
}

export interface DropPlan {
  /** Read-model collections no live registration names. */
  drop: string[];
  /** Those some live registration names. */
  keep: string[];
  /** The checkpoints of the versions and builds no live registration names. */
  checkpoints: string[];
}

const VERSIONED_CHECKPOINT = /^projector:(.+@v\d+)$/;
const BUILD_SUMMARY = /^read-models@(.+)$/;
/**
 * The checkpoints of the layout before versions: a projector's without a version, and the one
 * summary. Dropped with that layout's collections, so that a release from before versions started
 * again (a rollback) finds no checkpoint past its empty collections and rebuilds them from the log,
 * instead of applying only what came after and reporting ready with every earlier record missing.
 * (A process of this layout's `in-process` topology writes `read-models` again at its next step.)
 */
const LEGACY_CHECKPOINT = /^(projector:[^@]+|read-models)$/;

/**
 * Which read-model collections of `existing` no live process uses: those named after a version
 * (`<name>.v<n>`) and, of the layout before versions, those named as a read model is (`legacy`),
 * that no registration in `live` names; and the checkpoints of versions and builds no live
 * registration names. Anything else in the database (leases, webhook deliveries, the
 * registrations) is never a candidate.
 */
export function planDrop(existing: readonly string[], checkpoints: readonly string[], live: readonly Registration[], legacy: ReadonlySet<string>): DropPlan {
  const used = new Set(live.flatMap((r) => r.collections.map((c) => versionedName(c.name, c.version))));
  const candidates = existing.filter((n) => VERSIONED.test(n) || legacy.has(n)).sort();
  const versions = new Set(live.flatMap((r) => r.projectors.map((p) => `${p.name}@v${p.version}`)));
  const builds = new Set(live.map((r) => r.build));
  const unusedCheckpoint = (id: string) => {
    if (LEGACY_CHECKPOINT.test(id)) return true;
    const version = VERSIONED_CHECKPOINT.exec(id)?.[1];
    if (version !== undefined) return !versions.has(version);
    const build = BUILD_SUMMARY.exec(id)?.[1];
    return build !== undefined && !builds.has(build);
  };
  return {
    drop: candidates.filter((n) => !used.has(n)),
    keep: candidates.filter((n) => used.has(n)),
    checkpoints: checkpoints.filter(unusedCheckpoint).sort(),
  };
}

/**
 * `turnout rebuild --drop-unused`: drops the read-model collections (and their checkpoints) that
 * no process registered within `liveForMs` uses (projections/engine/builds.ts). Refuses, dropping
 * nothing, when no process is registered at all: an empty registry more likely means processes
 * that cannot reach the database than a deployment with nothing running.
 */
export async function dropUnusedReadModels(
  db: Db,
  options: { users: string; checkpoints: string; liveForMs: number; legacy: ReadonlySet<string>; now?: Date; onDrop?: (name: string) => void },
): Promise<DropPlan> {
  // What exists first, then who is registered: a process registers before it lays out its
  // collections (runtime/wiring.ts), so every collection listed here belongs to a process the read
  // after it sees, however their starts interleave (read the other way round, a build starting
  // between the two reads had its new collections dropped under it).
  const existing = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  const checkpoints = (await db.collection<{ _id: string }>(options.checkpoints).find({}, { projection: { _id: 1 } }).toArray()).map((c) => c._id);
  const since = new Date((options.now ?? new Date()).getTime() - options.liveForMs);
  const live = (await db.collection(options.users).find({ seenAt: { $gte: since } }).toArray()) as unknown as Registration[];
  if (!live.length) throw new Error(`no running process has registered the read models it uses in the last ${Math.round(options.liveForMs / 1000)} s: nothing dropped`);
  const plan = planDrop(existing, checkpoints, live, options.legacy);
  for (const name of plan.drop) {
    await db.collection(name).drop();
    options.onDrop?.(name);
  }
  if (plan.checkpoints.length) await db.collection<{ _id: string }>(options.checkpoints).deleteMany({ _id: { $in: plan.checkpoints } });
  return plan;
}

import { type Lease, LeaseKeeper } from '../lease.js';
import type { Projector } from './projector.js';

/** The lease of one projector version, which every build with that version competes for. */
export const versionLeaseName = (p: Pick<Projector, 'name' | 'version'>): string => `read-model-${p.name}-v${p.version}`;

/**
 * Which of a build's projector versions this process writes, on a read store several builds
 * share (a rolling deploy of a new read-model version, docs/production.md): one lease per
 * version, so that exactly one process of any build writes each version. The lease per build
 * picks the process of a build that projects; these pick, among the builds, the one that writes a
 * version they share. Without them both builds' projectors applied every event to the shared
 * version's collections, and two projectors are not idempotent under that interleaving.
 *
 * A version is written from the subscription after the lease was taken (`activate`, called as
 * the runner resubscribes and reads its checkpoints): `gained` asks the runner to resubscribe, so
 * it resumes the version from where its last writer left it. A lease lost stops the writes at
 * once (the keeper gives the lease up two thirds into its TTL, before another may take it).
 */
export class VersionOwnership {
  private readonly held = new Set<Projector>();
  private readonly active = new Set<Projector>();
  /** Versions whose lease is going: applied no more, what was applied of them being stored. */
  private readonly draining = new Set<Projector>();
  private keepers: LeaseKeeper[] = [];

  constructor(
    private readonly projectors: readonly Projector[],
    private readonly leaseOf: (name: string) => Lease | Promise<Lease>,
    private readonly options: { onError?: (err: unknown) => void; report?: (message: string) => void } = {},
  ) {}

  /** Whether this process applies events to `p` now (a chunk takes it at its start). */
  owns(p: Projector): boolean {
    return this.active.has(p) && !this.draining.has(p);
  }

  /** Whether this process stores `p`'s checkpoint: it owns it, or its lease is going and what was applied is being stored. */
  stores(p: Projector): boolean {
    return this.active.has(p);
  }

  /** The versions held now are written from this (re)subscription on, their checkpoints read after this. */
  activate(): void {
    this.active.clear();
    for (const p of this.held) this.active.add(p);
    // One whose lease is going stays stored (not applied) until what was applied of it is.
    for (const p of this.draining) this.active.add(p);
  }

  /**
   * Competes for every version's lease; `gained` is told when one is taken that is not written
   * yet, `losing` when one is about to go (the keeper gives it up before another can take it):
   * the runner stores what it applied of that version first, so its next writer does not apply
   * it again.
   */
  async start(gained: () => void, losing: () => Promise<void> = async () => {}): Promise<void> {
    for (const p of this.projectors) {
      const lease = await this.leaseOf(versionLeaseName(p));
      const keeper = new LeaseKeeper(
        lease,
        {
          start: async () => {
            this.held.add(p);
            if (!this.active.has(p)) gained();
          },
          stop: async () => {
            this.held.delete(p);
            if (!this.active.has(p)) return;
            // No chunk after the one under way applies it; what was applied is stored, within a
            // third of the TTL (the keeper gives the lease up two thirds in: another may take it at its end).
            this.draining.add(p);
            let late: NodeJS.Timeout | undefined;
            try {
              await Promise.race([losing(), new Promise<void>((resolve) => (late = setTimeout(resolve, lease.ttlMs / 3)))]);
            } catch (err) {
              this.options.onError?.(err);
            } finally {
              clearTimeout(late);
              this.active.delete(p);
              this.draining.delete(p);
            }
          },
        },
        {
          onError: this.options.onError,
          onChange: (held) => {
            if (!held) this.options.report?.(`read model ${p.name} v${p.version}: its lease lost; another process writes it`);
          },
        },
      );
      this.keepers.push(keeper);
    }
    await Promise.all(this.keepers.map((k) => k.start()));
  }

  /** Gives every lease up. */
  async stop(): Promise<void> {
    const keepers = this.keepers;
    this.keepers = [];
    await Promise.all(keepers.map((k) => k.stop()));
    this.held.clear();
    this.active.clear();
    this.draining.clear();
  }
}

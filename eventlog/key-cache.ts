import type { Sealer } from './sealing.js';

/**
 * Sealers by subject, at most `max`, the least recently used evicted first: the sealing layer's
 * keys in memory (sealed-log.ts), where past 50,000 subjects every new constituent evicts one.
 * The order is a queue of (subject, tick) beside the map, an entry's tick its place: the map's
 * own insertion order, the first key evicted through `keys().next()`, walked every key deleted
 * since the map last rehashed (25-70 µs an eviction past 50,000 keys, at each key made once
 * that many were).
 */
export class KeyCache {
  private readonly map = new Map<string, { sealer: Sealer; at: number }>();
  /** Counts insertions and moves: an entry's `at` says how many went in after it. */
  private tick = 0;
  /** Subjects in the order of their ticks (`ats`), from `head`; an entry whose tick is not its map entry's is stale (moved, deleted). */
  private subjects: string[] = [];
  private ats: number[] = [];
  private head = 0;

  constructor(private readonly max: number) {}

  get(subject: string): Sealer | undefined {
    const entry = this.map.get(subject);
    // A hit moves the entry to the young end only once it is in the older half: eviction stays
    // least-recently-used (a key in use never reaches the front), without a queue entry at every
    // write and read.
    if (entry && this.tick - entry.at > this.max / 2) this.queue(subject, (entry.at = this.tick++));
    return entry?.sealer;
  }

  has(subject: string): boolean {
    return this.map.has(subject);
  }

  set(subject: string, sealer: Sealer): void {
    const at = this.tick++;
    this.map.set(subject, { sealer, at });
    this.queue(subject, at);
    while (this.map.size > this.max) {
      const oldest = this.subjects[this.head];
      if (this.map.get(oldest)?.at === this.ats[this.head]) this.map.delete(oldest);
      this.head++;
    }
  }

  delete(subject: string): void {
    this.map.delete(subject);
  }

  private queue(subject: string, at: number): void {
    this.subjects.push(subject);
    this.ats.push(at);
    // Evicted and stale entries kept to at most as many again as the live ones: compacted once
    // in `max` pushes or more, so amortised to a few steps a push.
    if (this.subjects.length > 2 * this.max + 1_024) {
      const subjects: string[] = [];
      const ats: number[] = [];
      for (let k = this.head; k < this.subjects.length; k++) {
        if (this.map.get(this.subjects[k])?.at !== this.ats[k]) continue;
        subjects.push(this.subjects[k]);
        ats.push(this.ats[k]);
      }
      this.subjects = subjects;
      this.ats = ats;
      this.head = 0;
    }
  }
}

type Data = Record<string, unknown>;

/** What one appended event had sealed: each part's sealed text, and the values it holds. */
export interface SealedParts {
  /** Part name (`fields`, `changes`) to its sealed text, as written to the log. */
  texts: Record<string, string>;
  /** Part name to the personal values sealed in that text. */
  values: Record<string, Data>;
  /**
   * The data as appended, where JSON gives it back as it is (splitData): what opening the logged
   * data gives, handed to the subscriptions as it is, without putting the values back.
   */
  appended?: Data;
  /** The logged data these values were last put back into (`openedFrom`), and the result, shared by the subscriptions handed that data. */
  openedFrom?: Data;
  opened?: Data;
  /** How many subscriptions have been handed these values (SealingEventLog lets go of them once every one has). */
  taken?: number;
}

/**
 * The personal values of this process's own recent appends, by stream and revision, so that
 * the subscriptions that follow right behind an append (the in-process projector's and the
 * dispatcher's) take them from here rather than opening what this process has just sealed: two
 * AES-GCM opens, base64 and JSON a write. Bounded (the oldest entries go first), and kept to
 * what the log holds: an entry serves an event only when every sealed text of the event is the
 * one this process wrote, so it gives exactly what opening would.
 *
 * The same rule as the key cache: an erased subject is never served from here (its entries are
 * dropped at the erasure, and an erasure that begins while an append is under way keeps that
 * append's values out).
 */
export class OpenedCache {
  private readonly map = new Map<string, SealedParts>();
  /**
   * The keys in the order they were set, `max` of them, the slot at `next` the oldest: evicted
   * from here rather than as the map's first key (`keys().next()`), which walks every entry
   * deleted since the map last rehashed (2-4 µs a set at 4,096).
   */
  private readonly order: Array<string | undefined>;
  private next = 0;

  constructor(private readonly max: number) {
    this.order = new Array<string | undefined>(max);
  }

  set(stream: string, revision: bigint, parts: SealedParts): void {
    // Each key is set once (an append's stream and revision), the oldest going first. A key set
    // again (an append at that revision after one that failed) may go with its older slot: a miss,
    // which opens the event instead.
    const key = keyOf(stream, revision);
    const oldest = this.order[this.next];
    if (oldest !== undefined) this.map.delete(oldest);
    this.order[this.next] = key;
    this.next = (this.next + 1) % this.max;
    this.map.set(key, parts);
  }

  /** The values sealed in `sealed` (an event's `sealed` part texts), if this cache holds exactly those texts. */
  get(stream: string, revision: bigint, sealed: Record<string, unknown>): SealedParts | undefined {
    const parts = this.map.get(keyOf(stream, revision));
    if (!parts) return undefined;
    for (const part in sealed) if (parts.texts[part] !== sealed[part]) return undefined;
    for (const part in parts.texts) if (sealed[part] !== parts.texts[part]) return undefined;
    return parts;
  }

  /** Drops the entry of one event if it is still `parts` (an append that failed). */
  delete(stream: string, revision: bigint, parts: SealedParts): void {
    const key = keyOf(stream, revision);
    if (this.map.get(key) === parts) this.map.delete(key);
  }

  /** Drops every entry of the stream (an erasure). Rare, so a scan. */
  drop(stream: string): void {
    const prefix = `${stream}@`;
    for (const key of this.map.keys()) if (key.startsWith(prefix)) this.map.delete(key);
  }

  get size(): number {
    return this.map.size;
  }
}

const keyOf = (stream: string, revision: bigint) => `${stream}@${revision}`;

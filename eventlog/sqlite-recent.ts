import type { RecordedEvent } from '../domain/shared/events.js';

/** The most events held, whatever the followers have taken: a follower further behind reads the file. */
const MOST = 4096;

/**
 * The events this log committed last, oldest first: followers in this process take them from
 * here instead of reading back (and parsing again) what was just written. Another process's rows
 * are never here, so a follower that finds no next position here reads the file.
 *
 * An event is let go of as soon as every follower has taken it (forget), not kept for the next
 * few thousand commits: held for a second under load, every event written was copied by the
 * young generation's collections and then promoted, to die in the old one (with the sealing
 * layer, its sealed texts and parts too).
 */
export class RecentEvents {
  /** The events held are `events[start..]`; the slots before `start` are emptied. */
  private events: Array<RecordedEvent | undefined> = [];
  private start = 0;

  remember(events: RecordedEvent[]): void {
    for (const e of events) this.events.push(e);
    if (this.events.length - this.start > MOST) this.drop(this.events.length - MOST / 2);
  }

  /** The committed events right after `after`, consecutive, at most `max`, if this log wrote them; else null. */
  after(after: bigint, max: number): RecordedEvent[] | null {
    const r = this.events;
    const lo = this.firstAfter(after);
    if (lo >= r.length || r[lo]!.position.commit !== after + 1n) return null;
    const out = [r[lo]!];
    for (let i = lo + 1; i < r.length && out.length < max && r[i]!.position.commit === r[i - 1]!.position.commit + 1n; i++) out.push(r[i]!);
    return out;
  }

  /** Replaces the data of a stream's events held here, as the file's were rewritten (an erasure). */
  rewrite(stream: string, data: (e: RecordedEvent) => Record<string, unknown>): void {
    const r = this.events;
    for (let i = this.start; i < r.length; i++) if (r[i]!.stream === stream) r[i] = { ...r[i]!, data: data(r[i]!) };
  }

  /** Lets go of the events at or before `position` (every follower here is past them). */
  forget(position: bigint): void {
    const lo = this.firstAfter(position);
    if (lo > this.start) this.drop(lo);
  }

  /** Whether nothing this log committed after `after` is held here (so nothing of its own is left to take). */
  nothingAfter(after: bigint): boolean {
    const r = this.events;
    return r.length === this.start || r[r.length - 1]!.position.commit <= after;
  }

  /** Whether `event` is the last one this log committed. */
  isLast(event: RecordedEvent): boolean {
    return this.events.length > this.start && event === this.events[this.events.length - 1];
  }

  /** How many events are held (the tests' view). */
  get size(): number {
    return this.events.length - this.start;
  }

  /** Empties the slots before `to`; the array is cut once they are most of it. */
  private drop(to: number): void {
    const r = this.events;
    for (let i = this.start; i < to; i++) r[i] = undefined;
    this.start = to;
    if (to >= 1024 && to * 2 >= r.length) {
      this.events = r.slice(to);
      this.start = 0;
    }
  }

  /** The index of the first event held committed after `position` (the events are in commit order). */
  private firstAfter(position: bigint): number {
    const r = this.events;
    let lo = this.start;
    let hi = r.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r[mid]!.position.commit <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

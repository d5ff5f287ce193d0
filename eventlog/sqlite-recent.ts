import type { RecordedEvent } from '../domain/shared/events.js';

/**
 * The events this log committed last, oldest first: followers in this process take them from
 * here instead of reading back (and parsing again) what was just written. Another process's rows
 * are never here, so a follower that finds no next position here reads the file.
 */
export class RecentEvents {
  private events: RecordedEvent[] = [];

  remember(events: RecordedEvent[]): void {
    this.events.push(...events);
    if (this.events.length > 4096) this.events = this.events.slice(-2048);
  }

  /** The committed events right after `after`, consecutive, at most `max`, if this log wrote them; else null. */
  after(after: bigint, max: number): RecordedEvent[] | null {
    const r = this.events;
    const lo = this.firstAfter(after);
    if (lo >= r.length || r[lo].position.commit !== after + 1n) return null;
    const out = [r[lo]];
    for (let i = lo + 1; i < r.length && out.length < max && r[i].position.commit === r[i - 1].position.commit + 1n; i++) out.push(r[i]);
    return out;
  }

  /** Replaces the data of a stream's events held here, as the file's were rewritten (an erasure). */
  rewrite(stream: string, data: (e: RecordedEvent) => Record<string, unknown>): void {
    this.events = this.events.map((e) => (e.stream === stream ? { ...e, data: data(e) } : e));
  }

  /** Lets go of the events at or before `position` (a reader past them takes none of them again). */
  forget(position: bigint): void {
    const lo = this.firstAfter(position);
    if (lo > 0) this.events = this.events.slice(lo);
  }

  /** Whether nothing this log committed after `after` is held here (so nothing of its own is left to take). */
  nothingAfter(after: bigint): boolean {
    const r = this.events;
    return r.length === 0 || r[r.length - 1].position.commit <= after;
  }

  /** Whether `event` is the last one this log committed. */
  isLast(event: RecordedEvent): boolean {
    return event === this.events[this.events.length - 1];
  }

  /** The index of the first event held committed after `position` (the events are in commit order). */
  private firstAfter(position: bigint): number {
    const r = this.events;
    let lo = 0;
    let hi = r.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r[mid].position.commit <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

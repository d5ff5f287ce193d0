import { describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { Followers } from '../../eventlog/sqlite-follow.js';
import { RecentEvents } from '../../eventlog/sqlite-recent.js';

const event = (position: bigint): RecordedEvent => ({
  stream: `constituent-${position}`,
  revision: 0n,
  position: { commit: position, prepare: position },
  type: 'ConstituentCreated',
  data: { id: Number(position) },
  metadata: { team: 1, source: 'Public API', keyName: 'k', correlationId: 'c', at: '2026-11-27T00:00:00.000Z' },
});
const turn = () => new Promise((resolve) => setImmediate(resolve));
async function until(check: () => boolean): Promise<void> {
  while (!check()) await turn();
}

/** A log file that counts its reads and holds `rows` (what the writer thread committed, answered or not). */
function countingFile(rows: RecordedEvent[] = []) {
  const file = { reads: 0, closed: false, readAfter: (after: bigint, max: number) => (file.reads++, rows.filter((e) => e.position.commit > after).slice(0, max)), isClosed: () => file.closed };
  return file;
}

describe("a follower of the embedded log, once it takes this log's commits from memory", () => {
  it('takes the commits it read ahead of from memory, not the file, once memory catches up', async () => {
    // The writer thread has committed 1-3, not answered yet; a poll (or the start) reads them from the file.
    const recent = new RecentEvents();
    const onDisk = [event(1n), event(2n), event(3n)];
    const file = countingFile(onDisk);
    const followers = new Followers(file, recent, { pollMs: 60_000, batchSize: 512 });
    const seen: bigint[] = [];
    const sub = followers.follow(null, async (e) => {
      seen.push(e.position.commit);
      await turn();
    });
    await until(() => seen.length === 3);
    expect(file.reads).toBe(1);
    // Meanwhile the writer committed 4. The answers for 1-3 arrive: remembered, then the wake-up.
    // The follower is past them; reading the file now would take 4 from there, parse it a second
    // time when its own answer comes, and so stay ahead of memory for every commit after.
    onDisk.push(event(4n));
    recent.remember([event(1n), event(2n), event(3n)]);
    followers.wake();
    for (let i = 0; i < 5; i++) await turn();
    expect(seen).toEqual([1n, 2n, 3n]);
    recent.remember([event(4n)]);
    followers.wake();
    await until(() => seen.length === 4);
    expect(seen).toEqual([1n, 2n, 3n, 4n]);
    expect(file.reads).toBe(1);
    await sub.stop();
  });

  it("still reads the file when woken for another process's rows, or when its place is not in memory", async () => {
    const recent = new RecentEvents();
    const foreign = [event(1n), event(2n)];
    const file = countingFile(foreign);
    const followers = new Followers(file, recent, { pollMs: 60_000, batchSize: 512 });
    const seen: bigint[] = [];
    const sub = followers.follow({ commit: 2n, prepare: 2n }, (e) => void seen.push(e.position.commit));
    await until(() => file.reads === 1);
    // Another process appended 3 (head() saw it and woke the followers for the file).
    foreign.push(event(3n));
    followers.wake(true);
    await until(() => seen.length === 1);
    expect(seen).toEqual([3n]);
    // This log committed 5 while 4 is another process's, seen by no one yet: memory has a gap at
    // 4, so the commit's wake-up reads the file from 3.
    foreign.push(event(4n), event(5n));
    recent.remember([event(5n)]);
    followers.wake();
    await until(() => seen.length === 3);
    expect(seen).toEqual([3n, 4n, 5n]);
    expect(file.reads).toBe(3);
    await sub.stop();
  });
});

describe('the events a log keeps in memory for its readers', () => {
  it('lets go of each event once every follower has taken it, and holds what one has not yet', async () => {
    // Kept for the next few thousand commits, every event written was promoted by the young
    // generation's collections under load, to die in the old one (and, sealed, its parts too).
    const recent = new RecentEvents();
    const followers = new Followers(countingFile(), recent, { pollMs: 60_000, batchSize: 512 });
    const fast: bigint[] = [];
    const slow: bigint[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const a = followers.follow(null, (e) => void fast.push(e.position.commit));
    const b = followers.follow(null, async (e) => {
      slow.push(e.position.commit);
      if (e.position.commit === 2n) await held;
    });
    recent.remember([1n, 2n, 3n].map(event));
    followers.wake();
    await until(() => fast.length === 3 && slow.length === 2);
    for (let i = 0; i < 5; i++) await turn();
    // The slow follower has not taken its batch: everything stays for it.
    expect(recent.size).toBe(3);
    release();
    await until(() => slow.length === 3);
    await until(() => recent.size === 0);
    // A follower that stops holds nothing back.
    await b.stop();
    recent.remember([4n, 5n].map(event));
    followers.wake();
    await until(() => fast.length === 5);
    await until(() => recent.size === 0);
    await a.stop();
    // With no follower left, a commit is held for the next one (bounded), as before.
    recent.remember([event(6n)]);
    expect(recent.after(5n, 10)?.map((e) => e.position.commit)).toEqual([6n]);
  });

  it('keeps at most 4,096 events for a follower far behind, which then reads the file', () => {
    const recent = new RecentEvents();
    for (let i = 1; i <= 5000; i++) recent.remember([event(BigInt(i))]);
    expect(recent.size).toBeLessThanOrEqual(4096);
    expect(recent.after(0n, 10)).toBeNull();
    expect(recent.after(4999n, 10)?.map((e) => e.position.commit)).toEqual([5000n]);
    recent.forget(4990n);
    expect(recent.size).toBe(10);
    expect(recent.after(4990n, 3)?.map((e) => e.position.commit)).toEqual([4991n, 4992n, 4993n]);
  });

  it('lets go of those a reader is past, and then answers only after them', () => {
    const recent = new RecentEvents();
    recent.remember([1n, 2n, 3n, 4n, 5n].map(event));
    recent.forget(3n);
    expect(recent.after(3n, 10)?.map((e) => e.position.commit)).toEqual([4n, 5n]);
    // Before what it holds: the reader must go to the file.
    expect(recent.after(1n, 10)).toBeNull();
    recent.forget(9n);
    expect(recent.nothingAfter(0n)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import type { FollowerStatus } from '../../eventlog/follower.js';
import { watchProgress } from '../../projections/engine/progress.js';

/** A clock and a follower whose distance behind the test sets, sampled by hand (no waiting). */
function harness() {
  let t = 0;
  let statuses: FollowerStatus[] = [];
  const lines: string[] = [];
  let watch: ReturnType<typeof watchProgress> | null = null;
  return {
    lines,
    stop: () => watch?.stop(),
    at: async (seconds: number, next: FollowerStatus[]) => {
      t = seconds * 1000;
      statuses = next;
      // The first look is the watch's own, as it starts.
      watch ??= watchProgress({ followers: async () => statuses, report: (l) => lines.push(l), intervalMs: 3_600_000, now: () => t });
      await watch.sample();
    },
  };
}

const readModels = (state: FollowerStatus['state'], behind: number | null): FollowerStatus => ({ name: 'read-models', state, behind });

describe('logging the progress of a catch-up', () => {
  it('tells events done of the total, the rate and the time left at each look, then the total once caught up', async () => {
    const h = harness();
    await h.at(0, [readModels('catching_up', 1_100_000)]);
    await h.at(5, [readModels('catching_up', 860_000)]);
    await h.at(10, [readModels('catching_up', 620_000)]);
    await h.at(25, [readModels('caught_up', 0)]);
    h.stop();
    expect(h.lines).toEqual([
      'read-models: catching up 240,000/1,100,000 events (48,000/s, ETA 18 s)',
      'read-models: catching up 480,000/1,100,000 events (48,000/s, ETA 13 s)',
      'read-models: caught up, 1,100,000 events in 25 s (44,000/s)',
    ]);
  });

  it('says nothing of a follower that catches up before the first interval', async () => {
    const h = harness();
    await h.at(0, [readModels('catching_up', 300)]);
    await h.at(5, [readModels('caught_up', 0)]);
    h.stop();
    expect(h.lines).toEqual([]);
  });

  it('counts writes that arrive meanwhile into the total, not as work undone', async () => {
    const h = harness();
    await h.at(0, [readModels('catching_up', 1000)]);
    await h.at(5, [readModels('catching_up', 700)]);
    // 200 done and 100 appended since: the distance shrank by 100 only.
    await h.at(10, [readModels('catching_up', 600)]);
    h.stop();
    expect(h.lines).toEqual(['read-models: catching up 300/1,000 events (60/s, ETA 12 s)', 'read-models: catching up 400/1,000 events (40/s, ETA 15 s)']);
  });
});

import { describe, expect, it } from 'vitest';
import { measureReplay } from '../../bench/replay.js';

describe('the replay benchmark (bench/replay.ts), as a smoke at a tiny size', () => {
  it('replays every envelope and prints its rate beside the target, with the live latency', async () => {
    const lines = await measureReplay({ events: 300 });
    expect(lines[0]).toMatch(/^replay of 300 envelopes written before the endpoint existed: done, 300 sent, 0 failed, 300 received in [\d.]+ s = \d+ envelopes\/s \(target >= 2000: (met|NOT met)\)$/);
    expect(lines[1]).toMatch(/^live writes during the replay \(\d+, one per 100 ms\), 2xx to receiver: p50 [\d.]+ ms, max [\d.]+ ms$/);
  }, 60_000);
});

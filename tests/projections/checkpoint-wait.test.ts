import { describe, expect, it } from 'vitest';
import type { Position } from '../../domain/shared/events.js';
import { waitForCheckpoint } from '../../projections/engine/checkpoint-wait.js';
import type { ReadStore } from '../../projections/store/port.js';

const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });

/** A shared store whose checkpoint, as the projector process writes it, is read from `checkpoints` in turn (the last one stays). */
function storeReading(checkpoints: Array<Position | null>) {
  const asked: string[] = [];
  const store = {
    async getCheckpoint(name: string) {
      asked.push(name);
      return checkpoints.length > 1 ? checkpoints.shift()! : checkpoints[0];
    },
  } as unknown as ReadStore;
  return { store, asked };
}

// decisions.md §5 (read-your-writes) for a process that does not project: a write answers once
// the shared store's checkpoint has passed its position, never before.
describe('a write waiting for the shared read store (an API process that does not project)', () => {
  it('answers only once the checkpoint reaches its position, asking again meanwhile', async () => {
    const { store, asked } = storeReading([null, at(3), at(6), at(7)]);
    await waitForCheckpoint(store, at(7));
    expect(asked).toEqual(['read-models', 'read-models', 'read-models', 'read-models']);
  });

  it('answers at once when the checkpoint is already past it', async () => {
    const { store, asked } = storeReading([at(9)]);
    await waitForCheckpoint(store, at(7), 'feed');
    expect(asked).toEqual(['feed']);
  });

  it('fails after its time-out when the checkpoint never gets there, instead of hanging', async () => {
    const { store } = storeReading([at(6)]);
    await expect(waitForCheckpoint(store, at(7), 'read-models', 30)).rejects.toThrow('read models did not reach position 7 within 30 ms');
  });
});

import { describe, expect, it, vi } from 'vitest';
import { handle } from '../../commands/aggregate.js';
import { type BatchResource, writeBatch } from '../../commands/batch.js';
import type { WriteContext } from '../../commands/context.js';
import type { CommandDeps } from '../../commands/deps.js';
import type { Evolver } from '../../domain/shared/events.js';
import type { AppendResult, EventLog } from '../../eventlog/port.js';

const counter: Evolver<number> = { initial: () => 0, evolve: (n) => n + 1 };
const ctx: WriteContext = { team: 1, source: 'Application', keyName: null, correlationId: 'c', now: new Date('2030-01-01T00:00:00Z') };

/** A log whose appends commit only when the test says so. */
function heldLog() {
  const appends: Array<{ stream: string; commit: () => void }> = [];
  const log = {
    append: (stream: string) =>
      new Promise<AppendResult>((resolve) => {
        appends.push({ stream, commit: () => resolve({ position: { commit: 0n, prepare: 0n }, nextExpectedRevision: 0n } as unknown as AppendResult) });
      }),
  } as unknown as EventLog;
  return { log, appends };
}

/** Each item writes a stream of another category first (an upsert's claim), then its record. */
const things: BatchResource = {
  category: 'thing',
  idKind: 'thing',
  async write(deps, itemCtx, body) {
    const id = body as number;
    await handle(deps.log, `claim-${id}`, counter, itemCtx, () => [{ type: 'Claimed', data: {} }], { newStream: true });
    await handle(deps.log, `thing-${id}`, counter, itemCtx, () => [{ type: 'ThingCreated', data: {} }], { newStream: true });
    return { id, created: true };
  },
};

describe('the items of a batch (decisions.md §14)', () => {
  it('start in order, each once the one before has handed its record\'s append to the log, not once it committed', async () => {
    const { log, appends } = heldLog();
    const deps = { log, ids: { reserveAhead: async () => ({ left: 0, done: () => {} }) }, settle: async () => {} } as unknown as CommandDeps;
    const batch = writeBatch(deps, ctx, things, [1, 2, 3]);

    // Item 1's claim is not its record: item 2 waits while the claim is uncommitted.
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1']));
    await new Promise((resolve) => setImmediate(resolve));
    expect(appends.map((a) => a.stream)).toEqual(['claim-1']);
    appends[0].commit();

    // Once item 1's record append is handed over (still uncommitted), item 2 runs, and so on.
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1', 'claim-2']));
    appends[2].commit();
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1', 'claim-2', 'thing-2', 'claim-3']));
    appends[4].commit();
    await vi.waitFor(() => expect(appends).toHaveLength(6));
    for (const a of appends) a.commit();
    expect(await batch).toEqual([1, 2, 3].map((id) => ({ id, created: true })));
  });
});

import { describe, expect, it, vi } from 'vitest';
import { handle } from '../../commands/aggregate.js';
import { batchRef, type BatchResource, writeBatch } from '../../commands/batch.js';
import type { WriteContext } from '../../commands/context.js';
import type { CommandDeps } from '../../commands/deps.js';
import type { Evolver, Position, RecordedEvent } from '../../domain/shared/events.js';
import type { AppendResult, EventLog } from '../../eventlog/port.js';

const counter: Evolver<number> = { initial: () => 0, evolve: (n) => n + 1 };
const ctx: WriteContext = { team: 1, source: 'Application', keyName: null, correlationId: 'c', now: new Date('2030-01-01T00:00:00Z') };

/**
 * A log whose appends commit (or fail) only when the test says so; one that orders appends itself
 * (EventLog.ordersAppends: the embedded one) unless `ordersAppends` is false.
 */
function heldLog(ordersAppends = true) {
  const appends: Array<{ stream: string; commit: () => void; fail: () => void }> = [];
  const log = {
    ordersAppends,
    append: (stream: string) =>
      new Promise<AppendResult>((resolve, reject) => {
        appends.push({ stream, commit: () => resolve({ position: { commit: 0n, prepare: 0n }, nextExpectedRevision: 0n } as unknown as AppendResult), fail: () => reject(new Error('disk full')) });
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

  it('on a log that cannot order appends, hand one item\'s appends to it once the item before has committed its record, and none after a record append that failed', async () => {
    const { log, appends } = heldLog(false);
    const deps = { log, ids: { reserveAhead: async () => ({ left: 0, done: () => {} }) }, settle: async () => {} } as unknown as CommandDeps;
    const batch = writeBatch(deps, ctx, things, [1, 2, 3]);
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1']));
    appends[0].commit();
    // Item 2 has started (item 1 handed its record's append over), but its claim waits for that append.
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1']));
    await new Promise((resolve) => setImmediate(resolve));
    expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1']);
    appends[1].commit();
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1', 'claim-2']));
    appends[2].commit();
    await vi.waitFor(() => expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1', 'claim-2', 'thing-2']));
    // Item 2's record fails: the batch fails, and item 3, started meanwhile, writes nothing.
    appends[3].fail();
    await expect(batch).rejects.toThrow();
    expect(appends.map((a) => a.stream)).toEqual(['claim-1', 'thing-1', 'claim-2', 'thing-2']);
  });

  it('resume, on a retry, from the items the earlier try committed as the log itself holds them, where the team read trails it (EventStoreDB links)', async () => {
    const idem = { scope: 'key-1', key: 'k' };
    const ref = batchRef(idem, 'thing');
    const at = (n: number): Position => ({ commit: BigInt(n), prepare: BigInt(n) });
    const logged = (stream: string, n: number, type: string, batchItem?: string) =>
      ({ stream, revision: 0n, position: at(n), type, data: {}, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: ctx.now.toISOString(), ...(batchItem ? { batchItem } : {}) } }) as RecordedEvent;
    const journal = logged(`batch-${ref}`, 1, 'BatchStarted');
    // Items 0 and 1 committed before the earlier try failed; a later write of another team's follows.
    const events = [logged('thing-10', 2, 'ThingCreated', `${ref}#0`), logged('thing-11', 3, 'ThingCreated', `${ref}#1`)];
    const log = {
      readStreamBackwards: async (stream: string) => (stream === journal.stream ? [journal] : []),
      head: async () => at(3),
      // The team's links have not caught up with the earlier try: read through them, items 0 and 1 would be written again.
      readTeam: async () => [],
      readTeamUpTo: async (_team: number, from: Position | null, to: Position, limit: number) =>
        events.filter((e) => (!from || e.position.commit > from.commit) && e.position.commit <= to.commit).slice(0, limit),
    } as unknown as EventLog;
    const deps = { log, ids: { reserveAhead: async () => ({ left: 0, done: () => {} }) }, settle: async () => {} } as unknown as CommandDeps;
    const written: unknown[] = [];
    const resource: BatchResource = {
      category: 'thing',
      idKind: 'thing',
      async write(_deps, _ctx, body) {
        written.push(body);
        return { id: 20, created: true };
      },
    };
    expect(await writeBatch(deps, ctx, resource, ['a', 'b', 'c'], idem)).toEqual([
      { id: 10, created: true },
      { id: 11, created: true },
      { id: 20, created: true },
    ]);
    expect(written).toEqual(['c']);
  });
});

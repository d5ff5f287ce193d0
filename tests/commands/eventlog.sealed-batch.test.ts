import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyCache } from '../../eventlog/key-cache.js';
import { SqliteKeyStore } from '../../eventlog/keys.js';
import type { NewEvent } from '../../eventlog/port.js';
import { SealingEventLog } from '../../eventlog/sealed-log.js';
import { Sealer } from '../../eventlog/sealing.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * The appends of one turn of the event loop are sealed back to back, once they are all in, so
 * that AES-GCM's set-up runs with OpenSSL's state in the CPU's caches rather than once alone
 * among each request's work (decisions.md §17 unchanged: one key per constituent, AES-256-GCM).
 */
const tempDir = tempDirs('turnout-sealed-batch-');
afterEach(() => vi.restoreAllMocks());
const main = new Sealer(Sealer.newKey());
const meta = { team: 1, source: 'Public API' as const, keyName: 'k', correlationId: 'c', at: '2026-11-27T08:00:00.000Z' };
const created = (id: number, fields: Record<string, unknown>): NewEvent => ({ type: 'ConstituentCreated', data: { id, fields }, metadata: meta });

/** `sealThread` null: the turn sealed on the main thread, as before the sealing thread starts (the thread's own turns: eventlog.sealed-thread.test.ts). */
function open(sealThread?: null) {
  const dir = tempDir();
  const inner = new SqliteEventLog(path.join(dir, 'log.sqlite'), { pollMs: 20 });
  return { inner, log: new SealingEventLog(inner, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main), { sealThread }) };
}

describe('sealing the appends of one turn together', () => {
  it('seals every append of the turn before the first of them reaches the log', async () => {
    const { inner, log } = open(null);
    // The first write makes the keys of the next ids too: the three below find theirs in memory.
    await log.append('constituent-1', [created(1, { FirstName: 'First' })], 'no_stream');
    const steps: string[] = [];
    const seal = Sealer.prototype.sealBytes;
    vi.spyOn(Sealer.prototype, 'sealBytes').mockImplementation(function (this: Sealer, ...args) {
      steps.push('seal');
      return seal.apply(this, args);
    });
    const write = inner.append.bind(inner);
    vi.spyOn(inner, 'append').mockImplementation((stream, ...rest) => {
      steps.push(`append ${stream}`);
      return write(stream, ...rest);
    });
    await Promise.all([2, 3, 4].map((id) => log.append(`constituent-${id}`, [created(id, { FirstName: `N${id}`, Email1: `n${id}@example.org` })], 'no_stream')));
    expect(steps).toEqual(['seal', 'seal', 'seal', 'append constituent-2', 'append constituent-3', 'append constituent-4']);
    vi.restoreAllMocks();
    expect((await log.readStream('constituent-3'))[0].data).toEqual({ id: 3, fields: { FirstName: 'N3', Email1: 'n3@example.org' } });
    await log.close();
  });

  it('writes an append still waiting for its turn when the log is closed', async () => {
    const { log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'First' })], 'no_stream');
    const appended = log.append('constituent-2', [created(2, { FirstName: 'Last' })], 'no_stream');
    await log.close();
    await expect(appended).resolves.toMatchObject({ nextExpectedRevision: 0n });
  });

  it('refuses an append whose subject is erased while it waits for its turn, and writes nothing of it', async () => {
    const { inner, log } = open();
    await log.append('constituent-1', [created(1, { FirstName: 'First' })], 'no_stream');
    // The append takes the key from memory at once and waits for its turn to be sealed; the
    // erasure begins in between.
    const appended = log.append('constituent-2', [created(2, { FirstName: 'Marker' })], 'no_stream');
    const erased = log.rewriteStream('constituent-2');
    await expect(appended).rejects.toThrow(/constituent-2 is erased/);
    await erased;
    expect(await inner.readStream('constituent-2')).toEqual([]);
    // What holds no personal value may still be written to the erased stream.
    await log.append('constituent-2', [{ type: 'ConstituentErased', data: { id: 2 }, metadata: meta }], 'no_stream');
    expect((await log.readStream('constituent-2')).map((e) => e.type)).toEqual(['ConstituentErased']);
    await log.close();
  });
});

describe('the keys made ahead of the ids being created', () => {
  it('asks for none at a write to a record older than the keys already asked for, even when its neighbours\u2019 keys have left memory', async () => {
    const { log } = open();
    const keys = (log as unknown as { keys: SqliteKeyStore }).keys;
    await log.append('constituent-1', [created(1, { FirstName: 'First' })], 'no_stream');
    const asked = vi.spyOn(keys, 'keysFor');
    // The key half a batch ahead of constituent-1 is gone from memory (evicted, say).
    (log as unknown as { cache: { delete(s: string): void } }).cache.delete('constituent-257');
    await log.append('constituent-1', [{ type: 'ConstituentUpdated', data: { id: 1, changes: { LastName: 'Later' } }, metadata: meta }], 0n);
    expect(asked).not.toHaveBeenCalled();
    // (A creation half way through still asks for the next batch: eventlog.sealed.test.ts.)
    await log.close();
  });

  it('names only the ids past those asked for already when it makes the next keys ahead, looking none of them up in memory', async () => {
    const { log } = open();
    const keys = (log as unknown as { keys: SqliteKeyStore }).keys;
    await log.append('constituent-1', [created(1, { FirstName: 'First' })], 'no_stream');
    const asked = vi.spyOn(keys, 'keysFor');
    const lookedUp = vi.spyOn(KeyCache.prototype, 'has');
    // Half way through the batch made with constituent-1's key (2-512): the next one, 513-768.
    await log.append('constituent-257', [created(257, { FirstName: 'Half' })], 'no_stream');
    expect(asked).toHaveBeenCalledTimes(1);
    expect(asked.mock.calls[0][0]).toEqual(Array.from({ length: 256 }, (_, i) => `constituent-${513 + i}`));
    // The probe half a batch ahead, not one look-up a name.
    expect(lookedUp.mock.calls.length).toBeLessThan(5);
    await log.close();
  });
});

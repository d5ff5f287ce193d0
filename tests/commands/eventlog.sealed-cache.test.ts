import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteKeyStore } from '../../eventlog/keys.js';
import type { NewEvent } from '../../eventlog/port.js';
import { SealingEventLog } from '../../eventlog/sealed-log.js';
import { Sealer } from '../../eventlog/sealing.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * More keys loaded at once than the sealing layer keeps in memory (50,000 in the product; a batch
 * route's thousand items on 64 connections, or as many reads of as many constituents): each
 * write and read takes its key as the key store answered it, not from the cache, which may have
 * let it go before the request's continuation ran.
 */
const tempDir = tempDirs('turnout-sealed-cache-');
const main = new Sealer(Sealer.newKey());
const meta = { team: 1, source: 'Public API' as const, keyName: 'k', correlationId: 'c', at: '2026-11-28T08:00:00.000Z' };
const created = (id: number): NewEvent => ({ type: 'ConstituentCreated', data: { id, fields: { FirstName: `Name${id}`, Email1: `p${id}@example.org` } }, metadata: meta });
const ids = Array.from({ length: 40 }, (_, i) => i + 1);

function open(dir: string, cachedKeys?: number) {
  const inner = new SqliteEventLog(path.join(dir, 'log.sqlite'), { pollMs: 20 });
  return new SealingEventLog(inner, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main), { sealThread: null, cachedKeys });
}

/** Every constituent written at once through a layer keeping `cachedKeys` keys; answers it, open. */
async function written(dir: string, cachedKeys?: number) {
  const log = open(dir, cachedKeys);
  await Promise.all(ids.map((id) => log.append(`constituent-${id}`, [created(id)], 'no_stream')));
  return log;
}

describe('keys past the sealing layer\u2019s cache', () => {
  it('writes every one of more new constituents at once than it keeps keys for', async () => {
    const log = await written(tempDir(), 8);
    expect((await log.readStream('constituent-1'))[0].data).toEqual(created(1).data);
    await log.close();
  });

  it('reads every one of more constituents at once than it keeps keys for whole, none as if erased', async () => {
    const dir = tempDir();
    await (await written(dir)).close();
    // A fresh process: no key in memory, every read fetches its key, all at once.
    const again = open(dir, 8);
    const read = await Promise.all(ids.map((id) => again.readStream(`constituent-${id}`)));
    expect(read.map((events) => events[0].data)).toEqual(ids.map((id) => created(id).data));
    await again.close();
  });

  it('opens a page of the team whole where some keys were in memory and the page\u2019s loads pushed them out (the review of 1dd007c)', async () => {
    const dir = tempDir();
    await (await written(dir)).close();
    const again = open(dir, 8);
    expect((await again.readStream('constituent-1'))[0].data).toEqual(created(1).data); // its key now in memory
    const page = await again.readTeam!(1, null, 1000);
    expect(page.map((e) => e.data)).toEqual(ids.map((id) => created(id).data));
    await again.close();
  });
});

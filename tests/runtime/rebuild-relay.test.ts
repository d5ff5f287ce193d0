import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { openLogReader } from '../../eventlog/sqlite-file.js';
import { type RelayedChunk, RelayedLog, RelayReader } from '../../runtime/rebuild-relay.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-relay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the log as the rebuild's first thread hands it to the second", () => {
  it('gives the second thread every event as the log reader gives it, in chunks it may take part of at a time', async () => {
    const file = path.join(dir, 'log.sqlite');
    const log = new SqliteEventLog(file);
    const at = new Date().toISOString();
    // Data the JSON must carry as stored: unicode, escapes, nulls, nesting.
    for (let i = 0; i < 25; i++) {
      const data = { id: i, name: i % 2 ? `é ${i} \u2028 "q" </script>` : null, nested: { list: [i, 'x', { deep: true }] } };
      await log.append(`thing-${i % 3}`, [{ type: i % 4 ? 'Thing' : 'Other', data, metadata: { team: 1, source: 'Public API', keyName: 'K', correlationId: 'c', at } }], 'any');
    }
    await log.close();

    const sent: RelayedChunk[] = [];
    // The structured clone the thread's port makes: what the other side receives.
    const relayed = new RelayedLog(file, (chunk) => sent.push(structuredClone(chunk)));
    const reader = openLogReader(file);
    const handed = new RelayReader();
    let ready = false;
    void handed.ready().then(() => (ready = true));
    await Promise.resolve();
    expect(ready).toBe(false);

    const expected = [...reader.readAfter(0n, 10), ...reader.readAfter(10n, 10), ...reader.readAfter(20n, 10)];
    expect(relayed.readAfter(0n, 10)).toEqual(expected.slice(0, 10));
    expect(relayed.readAfter(10n, 10)).toEqual(expected.slice(10, 20));
    expect(relayed.readAfter(20n, 10)).toEqual(expected.slice(20));
    expect(relayed.relayed).toBe(25);
    for (const chunk of sent) handed.take(chunk);
    await handed.ready();
    expect(ready).toBe(true);

    expect(handed.head()).toBe(25n);
    // A step takes at most what it asks; the rest of that chunk comes first at the next.
    const got = [...handed.readAfter(0n, 4), ...handed.readAfter(4n, 20), ...handed.readAfter(10n, 20), ...handed.readAfter(20n, 20)];
    expect(got).toEqual(expected);
    // A position it has passed already is a fault of the hand-over, never skipped silently.
    handed.take(sent[0]);
    expect(() => handed.readAfter(25n, 20)).toThrow(/handed position 1, at 25 already/);
    expect(() => new RelayReader().readAfter(0n, 20)).toThrow(/read past what it was handed/);
    relayed.close();
    reader.close();
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { openLogReader } from '../../eventlog/sqlite-file.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { chunkReceiver, chunkSender, type RelayedChunk, RelayedLog, RelayReader } from '../../runtime/rebuild-relay.js';

/** An event's values read through its properties: the relay's events parse their JSON when read (runtime/rebuild-events.ts). */
const plain = (events: RecordedEvent[]) => events.map((e) => ({ stream: e.stream, revision: e.revision, position: e.position, type: e.type, data: e.data, metadata: e.metadata }));

const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-relay-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the log as the rebuild's first thread hands it to the second", () => {
  it('gives the second thread every event as the log reader gives it, in chunks it may take part of at a time', async () => {
    const file = path.join(dir, 'log.sqlite');
    const log = new SqliteEventLog(file);
    const at = new Date().toISOString();
    // Data the JSON must carry as stored: unicode, escapes, nulls, nesting.
    for (let i = 0; i < 25; i++) {
      const data = { id: i, name: i % 2 ? `é ${i} \u2028 "q" </script> 🗳️` : null, nested: { list: [i, 'x', { deep: true }] } };
      await log.append(`thing-${i % 3}`, [{ type: i % 4 ? 'Thing' : 'Other', data, metadata: { team: 1, source: 'Public API', keyName: 'K', correlationId: 'c', at } }], 'any');
    }
    await log.close();

    // The threads' own channel, both ends in this thread: what the other side takes is the port's structured clone.
    const { port1, port2 } = new MessageChannel();
    const bell = new Int32Array(new SharedArrayBuffer(4));
    const relayed = new RelayedLog(file, chunkSender(port1, bell));
    const reader = openLogReader(file);
    const take = chunkReceiver(port2, bell);
    let taken = 0;
    const chunks: RelayedChunk[] = [];
    const handed = new RelayReader(() => {
      taken++;
      chunks.push(take());
      return chunks[chunks.length - 1];
    });

    const expected = [...reader.readAfter(0n, 10), ...reader.readAfter(10n, 10), ...reader.readAfter(20n, 10)];
    expect(plain(relayed.readAfter(0n, 10))).toEqual(expected.slice(0, 10));
    // The next chunk is handed over before this thread reads it: the other has it meanwhile.
    expect(Atomics.load(bell, 0)).toBe(2);
    expect(plain(relayed.readAfter(10n, 10))).toEqual(expected.slice(10, 20));
    expect(plain(relayed.readAfter(20n, 10))).toEqual(expected.slice(20));
    expect(relayed.relayed).toBe(25);
    expect(Atomics.load(bell, 0)).toBe(3);
    expect(taken).toBe(0);

    expect(handed.head()).toBe(25n);
    expect(taken).toBe(1);
    // A step takes at most what it asks; the rest of that chunk comes first at the next.
    const got = [...handed.readAfter(0n, 4), ...handed.readAfter(4n, 20), ...handed.readAfter(10n, 20), ...handed.readAfter(20n, 20)];
    expect(plain(got)).toEqual(expected);
    // Only the event read last keeps its parsed values; one read again after another gives its own, the same twice in a row.
    expect(got[5].data).toEqual(expected[5].data);
    expect(got[3].metadata).toEqual(expected[3].metadata);
    expect(got[3].data).toEqual(expected[3].data);
    expect(got[3].data).toBe(got[3].data);
    expect(got[5].data).toEqual(expected[5].data);
    // One chunk taken at a time, when the one before is used up.
    expect(taken).toBe(3);
    // What crosses carries no string of the log: each chunk's text and numbers are in memory both
    // threads share, so neither heap holds a chunk's text while it is applied.
    for (const chunk of chunks) {
      expect(Object.keys(chunk).sort()).toEqual(['columns', 'count', 'head', 'text', 'type']);
      expect(chunk.text).toBeInstanceOf(SharedArrayBuffer);
      expect(chunk.columns).toBeInstanceOf(SharedArrayBuffer);
    }
    expect(chunks.map((c) => c.count)).toEqual([10, 10, 5]);
    // A chunk's text is read in pieces of a bounded size (SQLite refuses a blob over 1 GB): in
    // pieces of one event each, or of a few, it is the same.
    for (const pieceBytes of [1, 600]) {
      const piecewise = new RelayedLog(file, () => {}, pieceBytes);
      expect(plain(piecewise.readAfter(0n, 25))).toEqual(expected);
      piecewise.close();
    }
    // Asked out of order, the relay says so rather than hand anything twice.
    const again = new RelayedLog(file, chunkSender(port1, bell));
    again.readAfter(0n, 10);
    expect(() => again.readAfter(0n, 10)).toThrow(/asked for 10 events after 0, having handed 10 after 10/);
    again.close();
    // A position it has passed already is a fault of the hand-over, never skipped silently.
    expect(() => handed.readAfter(25n, 20)).toThrow(/handed position 1, at 25 already/);
    port1.close();
    relayed.close();
    reader.close();
  });

  it('tells how far the second thread must have got for the bytes of text it holds unapplied to fit the cap', async () => {
    const file = path.join(dir, 'cap.sqlite');
    const log = new SqliteEventLog(file);
    const metadata = { team: 1, source: 'Public API' as const, keyName: 'K', correlationId: 'c', at: new Date().toISOString() };
    for (let i = 0; i < 30; i++) await log.append(`s-${10 + i}`, [{ type: 'Thing', data: { i: 1000 + i }, metadata }], 'any');
    await log.close();
    const relayed = new RelayedLog(file, () => {});
    for (let after = 0n; after < 30n; after += 10n) relayed.readAfter(after, 10);
    // Every event's text is the same length here: a chunk of 10 holds a third of it all.
    const chunk = relayed.mostHeld / 3;
    expect(relayed.mostHeld).toBeGreaterThan(0);
    expect(relayed.neededFor(3 * chunk, 0)).toBe(0);
    expect(relayed.neededFor(3 * chunk - 1, 0)).toBe(10);
    expect(relayed.neededFor(chunk, 0)).toBe(20);
    expect(relayed.neededFor(0, 0)).toBe(30);
    // What it has applied is no longer held: the first chunk, and a part of the second does not count.
    expect(relayed.neededFor(2 * chunk, 15)).toBe(0);
    expect(relayed.neededFor(chunk, 15)).toBe(20);
    relayed.close();
  });
});

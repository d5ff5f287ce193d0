import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import type { RecordedEvent } from '../../domain/shared/events.js';
import { openLogReader, toRecorded } from '../../eventlog/sqlite-file.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { type CommitNotice, eventsOfNotice } from '../../eventlog/sqlite-wire.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const meta = (n: number) => ({ team: 1, source: 'Public API' as const, keyName: 'k', correlationId: `c${n}`, at: '2026-11-27T12:00:00.000Z', revision: 1 });
const event = (type: string, n: number, data: Record<string, unknown> = {}) => ({ type, data: { id: n, ...data }, metadata: meta(n) });

describe("the log writer thread's commit notices", () => {
  it('carry every committed event as a read of the file gives it back, conflicts left out, across commits', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-notice-'));
    dirs.push(dir);
    const file = path.join(dir, 'log.sqlite');
    const log = new SqliteEventLog(file);
    const { port1, port2 } = new MessageChannel();
    const notices: CommitNotice[] = [];
    port1.on('message', (n: CommitNotice) => notices.push(n));
    expect(await log.tellCommits(port2)).toBe(true);
    // One turn: appends of one event and of several, a stream appended to twice, a conflict
    // between them, and text JSON must escape; the next turns commit on their own.
    const appends = [
      log.append('constituent-1', [event('ConstituentCreated', 1, { fields: { FirstName: 'Zoë "Z" \u2028' } })], 'no_stream'),
      log.append('event-2', [event('EventCreated', 2), event('EventFormDefaultsSet', 2)], 'no_stream'),
      log.append('constituent-1', [event('ConstituentUpdated', 1)], 'no_stream'),
      log.append('constituent-3', [event('ConstituentCreated', 3)], 'no_stream'),
    ];
    const settled = await Promise.allSettled(appends);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    await log.append('constituent-1', [event('ConstituentUpdated', 1), event('ConstituentLocked', 1)], 0n);
    await log.append('volunteer-4', [event('VolunteerCreated', 4)], 'no_stream');
    await log.close();
    const told: RecordedEvent[] = notices.flatMap((n) => eventsOfNotice(n, toRecorded));
    const reader = openLogReader(file);
    try {
      const onDisk = reader.readAfter(0n, 100);
      expect(onDisk).toHaveLength(7);
      expect(told).toEqual(onDisk);
      // Each notice's last position is that of its commit's last event.
      expect(notices.map((n) => n.last)).toEqual(notices.map((n) => eventsOfNotice(n, toRecorded).at(-1)!.position.commit));
    } finally {
      reader.close();
      port1.close();
    }
  });
});

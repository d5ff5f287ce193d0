import type Database from 'better-sqlite3';
import { type Position, positionFromString, positionToString } from '../../domain/shared/events.js';
import { Pause } from '../../eventlog/pause.js';
import { batcherFor } from './sqlite-batch.js';
import type { Consumer, DeliveryQueue, DeliveryTask, Handled, Lease } from './port.js';

interface TaskRow {
  id: string;
  endpoint_id: number | bigint;
  team: number | bigint;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number | bigint;
  due_at: number | bigint;
  replay: string | null;
  traceparent: string | null;
}

const LANE_LIVE = 0;
const LANE_REPLAY = 1;
/** The part of the consumer's concurrency replay tasks may hold at once. */
const REPLAY_SHARE = 0.75;

/**
 * The embedded queue: a table in the webhook database it is given (webhooks.sqlite, opened by
 * the composition root). Enqueueing and moving the
 * dispatcher's checkpoint are one transaction, so after a crash an event is either fully
 * enqueued with the checkpoint past it, or not at all and replayed; `INSERT OR IGNORE` on the
 * deterministic task id covers the rest.
 *
 * One consumer per file (the embedded product runs in one process): leases are kept in memory,
 * and an attempt cut short by a crash stays due, so it is redone after restart (at least once).
 */
export class SqliteDeliveryQueue implements DeliveryQueue {
  private readonly wakers = new Set<() => void>();
  private readonly stmt;

  constructor(
    private readonly db: Database.Database,
    private readonly name = 'webhooks',
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS webhook_tasks (
        id TEXT PRIMARY KEY, endpoint_id INTEGER NOT NULL, team INTEGER NOT NULL, event_id TEXT NOT NULL,
        event_type TEXT NOT NULL, body TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, due_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS webhook_tasks_due ON webhook_tasks (due_at);
      CREATE TABLE IF NOT EXISTS webhook_checkpoints (name TEXT PRIMARY KEY, position TEXT NOT NULL);
    `);
    // Replay tasks (decisions.md §12) wait in a lane of their own, taken only when live ones leave
    // room, so a replay of a million events never delays a live delivery.
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('webhook_tasks')").all();
    if (!columns.some((c) => c.name === 'replay')) db.exec('ALTER TABLE webhook_tasks ADD COLUMN replay TEXT; ALTER TABLE webhook_tasks ADD COLUMN lane INTEGER NOT NULL DEFAULT 0;');
    db.exec('CREATE INDEX IF NOT EXISTS webhook_tasks_lane_due ON webhook_tasks (lane, due_at)');
    // The trace of the write that caused a task (decisions.md §15), for its attempts' spans to link to.
    if (!columns.some((c) => c.name === 'traceparent')) db.exec('ALTER TABLE webhook_tasks ADD COLUMN traceparent TEXT');
    this.stmt = {
      insert: db.prepare(
        'INSERT OR IGNORE INTO webhook_tasks (id, endpoint_id, team, event_id, event_type, body, attempts, due_at, replay, lane, traceparent) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)',
      ),
      setCheckpoint: db.prepare('INSERT INTO webhook_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position'),
      getCheckpoint: db.prepare<[string], { position: string }>('SELECT position FROM webhook_checkpoints WHERE name = ?'),
      due: db.prepare<[number, number, number], { id: string }>('SELECT id FROM webhook_tasks WHERE lane = ? AND due_at <= ? ORDER BY due_at LIMIT ?'),
      one: db.prepare<[string], TaskRow>('SELECT * FROM webhook_tasks WHERE id = ?'),
      nextAfter: db.prepare<[number], { at: number | bigint | null }>('SELECT MIN(due_at) AS at FROM webhook_tasks WHERE due_at > ?'),
      done: db.prepare('DELETE FROM webhook_tasks WHERE id = ?'),
      retry: db.prepare('UPDATE webhook_tasks SET attempts = ?, due_at = ? WHERE id = ?'),
      depth: db.prepare<[], number>('SELECT COUNT(*) FROM webhook_tasks').pluck(),
    };
  }

  async depth(): Promise<number> {
    return this.stmt.depth.get() ?? 0;
  }

  async checkpoint(): Promise<Position | null> {
    const r = this.stmt.getCheckpoint.get(this.name);
    return r ? positionFromString(r.position) : null;
  }

  async enqueue(tasks: DeliveryTask[], checkpoint: Position): Promise<void> {
    const due = this.now();
    await batcherFor(this.db).run(() => {
      this.insert(tasks, due);
      this.stmt.setCheckpoint.run(this.name, positionToString(checkpoint));
    });
    if (tasks.length) for (const w of this.wakers) w();
  }

  async add(tasks: DeliveryTask[]): Promise<void> {
    if (!tasks.length) return;
    const due = this.now();
    await batcherFor(this.db).run(() => this.insert(tasks, due));
    for (const w of this.wakers) w();
  }

  private insert(tasks: DeliveryTask[], due: number): void {
    for (const t of tasks) this.stmt.insert.run(t.id, t.endpointId, t.team, t.eventId, t.eventType, t.body, due, t.replay ?? null, t.replay ? LANE_REPLAY : LANE_LIVE, t.traceparent ?? null);
  }

  consume(handler: (lease: Lease) => Promise<Handled>, options: { concurrency: number }): Consumer {
    const inflight = new Map<string, Promise<void>>();
    const replaying = new Set<string>();
    const replayShare = Math.max(1, Math.floor(options.concurrency * REPLAY_SHARE));
    let stopped = false;
    // A wake-up that arrives while the loop is busy is kept, so it is never lost.
    let kicked = false;
    const pause = new Pause();
    // Completions arrive in bursts: one scan after the current turn serves all of them.
    let wakeScheduled = false;
    const waker = () => {
      kicked = true;
      if (wakeScheduled) return;
      wakeScheduled = true;
      setImmediate(() => {
        wakeScheduled = false;
        pause.wake();
      });
    };
    this.wakers.add(waker);

    const run = async (row: TaskRow) => {
      const attempt = Number(row.attempts) + 1;
      const task: DeliveryTask = {
        id: row.id,
        endpointId: Number(row.endpoint_id),
        team: Number(row.team),
        eventId: row.event_id,
        eventType: row.event_type,
        body: row.body,
        ...(row.replay ? { replay: row.replay } : {}),
        ...(row.traceparent ? { traceparent: row.traceparent } : {}),
      };
      try {
        const outcome = await handler({ task, attempt });
        // The attempt's record, queued by the handler this same turn, and the task's end share a
        // commit; the end is not written if the record fails (the task stays due).
        await batcherFor(this.db).run(
          () =>
            outcome.kind === 'done'
              ? this.stmt.done.run(row.id)
              : this.stmt.retry.run(outcome.kind === 'retry' ? attempt : attempt - 1, this.now() + outcome.delayMs, row.id),
          outcome.written,
        );
      } catch {
        // The handler records its own failures; an unexpected throw leaves the task due, to retry.
      } finally {
        inflight.delete(row.id);
        replaying.delete(row.id);
        waker();
      }
    };

    const loop = (async () => {
      while (!stopped) {
        kicked = false;
        const now = this.now();
        const free = options.concurrency - inflight.size;
        if (free > 0) {
          let took = 0;
          const take = (rows: Array<{ id: string }>, limit: number) => {
            for (const { id } of rows) {
              if (took >= limit) break;
              if (inflight.has(id)) continue;
              const row = this.stmt.one.get(id);
              if (!row) continue;
              if (row.replay) replaying.add(id);
              inflight.set(id, run(row));
              took++;
            }
          };
          take(this.stmt.due.all(LANE_LIVE, now, free + inflight.size), free);
          // Replay tasks fill what live ones leave free, up to their share: the rest stays for
          // live tasks that come while a replay's receiver is slow.
          const room = Math.min(free - took, replayShare - replaying.size);
          if (room > 0) take(this.stmt.due.all(LANE_REPLAY, now, room + replaying.size), took + room);
        }
        // Sleep until a completion or an enqueue wakes us, the next task falls due, or a second
        // passes (tasks another writer of the file added).
        let waitMs = 1000;
        if (inflight.size < options.concurrency) {
          const next = this.stmt.nextAfter.get(now)?.at;
          if (next !== null && next !== undefined) waitMs = Math.max(1, Math.min(waitMs, Number(next) - now));
        }
        if (kicked || stopped) continue;
        await pause.for(waitMs);
      }
    })();

    return {
      stop: async () => {
        stopped = true;
        pause.wake();
        this.wakers.delete(waker);
        await loop;
        await Promise.all(inflight.values());
      },
    };
  }

  async close(): Promise<void> {
    for (const w of this.wakers) w();
  }
}

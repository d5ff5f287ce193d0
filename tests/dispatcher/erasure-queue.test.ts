import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { pingEnvelopeId } from '../../dispatcher/envelope.js';
import { mentionsAny, purgeQueuedBodies } from '../../dispatcher/erasure.js';

/** An erasure's purge of queued deliveries' bodies (decisions.md §17), a page at a time. */
describe("an erasure's purge of the delivery queue", () => {
  it("rebuilds or drops the team's queued bodies that hold an erased value, a page a turn, and leaves other teams' alone", async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE webhook_tasks (id TEXT PRIMARY KEY, team INTEGER NOT NULL, event_id TEXT NOT NULL, body TEXT NOT NULL)');
    const put = db.prepare('INSERT INTO webhook_tasks (id, team, event_id, body) VALUES (?, ?, ?, ?)');
    for (let i = 0; i < 9; i++) put.run(`t${i}`, 1, `evt_${100 + i}_1700000000`, JSON.stringify({ name: i % 2 ? 'Kept Person' : 'Gone Person' }));
    put.run('u0', 2, 'evt_200_1700000000', JSON.stringify({ name: 'Gone Person' }));
    // Turns of the event loop that other work gets while the purge runs.
    let turns = 0;
    let counting = true;
    const turn = () => {
      if (!counting) return;
      turns++;
      setImmediate(turn);
    };
    setImmediate(turn);
    const touched = await purgeQueuedBodies(
      db,
      1,
      mentionsAny(['Gone Person']),
      // The envelope of the first task no longer fires (dropped); the others are built again.
      async (seq) => (seq === 100n ? null : JSON.stringify({ name: null, seq: Number(seq) })),
      2,
    );
    counting = false;
    expect(touched).toBe(5);
    expect(turns).toBeGreaterThan(1);
    const bodies = Object.fromEntries(db.prepare<[], { id: string; body: string }>('SELECT id, body FROM webhook_tasks').all().map((r) => [r.id, JSON.parse(r.body)]));
    expect(bodies.t0).toBeUndefined();
    expect(bodies.t2).toEqual({ name: null, seq: 102 });
    expect(bodies.t8).toEqual({ name: null, seq: 108 });
    expect(bodies.t1).toEqual({ name: 'Kept Person' });
    expect(bodies.u0).toEqual({ name: 'Gone Person' });
    db.close();
  });

  it("leaves a queued resend of a test ping alone: no log event's envelope, to build again or drop", async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE webhook_tasks (id TEXT PRIMARY KEY, team INTEGER NOT NULL, event_id TEXT NOT NULL, body TEXT NOT NULL)');
    const ping = JSON.stringify({ type: 'webhook.ping', data: { endpointId: 7 } });
    db.prepare('INSERT INTO webhook_tasks (id, team, event_id, body) VALUES (?, ?, ?, ?)').run('p0', 1, pingEnvelopeId(1_700_000_000), ping);
    const rebuilt: bigint[] = [];
    // A value that the ping's text happens to hold.
    const touched = await purgeQueuedBodies(db, 1, mentionsAny(['webhook.ping']), async (seq) => (rebuilt.push(seq), null));
    expect([touched, rebuilt]).toEqual([0, []]);
    expect(db.prepare('SELECT body FROM webhook_tasks').pluck().all()).toEqual([ping]);
    db.close();
  });
});

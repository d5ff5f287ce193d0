import { type Collection, type Db, MongoClient, MongoServerError } from 'mongodb';
import { onceUntilFailed } from '../../eventlog/once.js';
import { dbNameOf } from '../../projections/store/mongo.js';
import { type Begun, type IdempotencyStore, STALE_MS, type StoredAnswer, TTL_MS } from './port.js';

interface Entry {
  _id: string;
  fingerprint: string;
  startedAt: number;
  /**
   * While the entry runs, its process sets this to its clock every BEAT_MS. Absent on entries
   * written before the heartbeat existed: those are judged by `startedAt` and STALE_MS.
   */
  beatAt?: number;
  /** When MongoDB's TTL monitor may drop the entry. */
  expiresAt: Date;
  answer: StoredAnswer | null;
  /** Where the entry's first request began its write (the port's mark), kept by a takeover. */
  mark?: string;
  /** Set when its request ended unanswered: the next begin of the same request takes it over at once. */
  abandoned?: true;
}

const DUPLICATE_KEY = 11000;

/** How often a process marks the entries it is running as alive. */
export const BEAT_MS = 10_000;
/**
 * A running entry whose heartbeat is this old is taken to have died with its process (another
 * machine's process cannot be probed as the embedded store probes a pid): three beats missed,
 * which leaves room for a slow beat and for a few seconds between the machines' clocks.
 */
export const ABANDONED_MS = 3 * BEAT_MS;

export interface MongoIdempotencyOptions {
  beatMs?: number;
  /** The heartbeat's clock (tests). */
  now?: () => number;
}

/**
 * Idempotency keys in one MongoDB collection, shared by every API process of the production
 * stack. A TTL index drops entries a day old (MongoDB sweeps about once a minute, so begin()
 * also ignores an entry past its time). Racing requests: the insert of `_id` succeeds for
 * exactly one; an expired or abandoned entry is taken over by a replace conditioned on the
 * start and beat read, so again exactly one wins. A running entry is abandoned once its
 * process's heartbeat stops (a crash, a killed container): a retry then runs after about
 * ABANDONED_MS instead of waiting out STALE_MS.
 */
export class MongoIdempotencyStore implements IdempotencyStore {
  /** The TTL index, made at the first request; tried again after a failure. */
  private readonly index: () => Promise<unknown>;
  /** The entries this process runs, which its heartbeat keeps alive, and the start of each one's take. */
  private readonly running = new Map<string, number>();
  private readonly beat: ReturnType<typeof setInterval>;
  private readonly now: () => number;

  constructor(
    private readonly keys: Collection<Entry>,
    private readonly client: MongoClient | null = null,
    options: MongoIdempotencyOptions = {},
  ) {
    this.index = onceUntilFailed(() => this.keys.createIndexes([{ key: { expiresAt: 1 }, name: 'expires', expireAfterSeconds: 0 }]));
    this.now = options.now ?? Date.now;
    this.beat = setInterval(() => void this.heartbeat().catch(() => {}), options.beatMs ?? BEAT_MS);
    this.beat.unref();
  }

  static async connect(url: string): Promise<MongoIdempotencyStore> {
    const client = new MongoClient(url);
    await client.connect();
    return MongoIdempotencyStore.on(client.db(dbNameOf(url)), client);
  }

  static on(db: Db, client: MongoClient | null = null, options: MongoIdempotencyOptions = {}): MongoIdempotencyStore {
    return new MongoIdempotencyStore(db.collection<Entry>('idempotency_keys'), client, options);
  }

  /**
   * Marks every entry this process runs as alive, in one update. A failed beat is not fatal: the
   * next one comes BEAT_MS later, well inside ABANDONED_MS.
   */
  async heartbeat(): Promise<void> {
    if (this.running.size === 0) return;
    await this.keys.updateMany({ _id: { $in: [...this.running.keys()] }, answer: null }, { $set: { beatAt: this.now() } });
  }

  async begin(scope: string, key: string, fingerprint: string, now: number, mark?: string): Promise<Begun> {
    await this.index();
    const _id = `${scope}\n${key}`;
    const fresh: Entry = { _id, fingerprint, startedAt: now, beatAt: now, expiresAt: new Date(now + TTL_MS), answer: null, ...(mark === undefined ? {} : { mark }) };
    try {
      await this.keys.insertOne(fresh);
      this.running.set(_id, now);
      return { state: 'started' };
    } catch (err) {
      if (!(err instanceof MongoServerError && err.code === DUPLICATE_KEY)) throw err;
    }
    const found = await this.keys.findOne({ _id });
    if (!found) return this.begin(scope, key, fingerprint, now, mark); // dropped in between
    const expired = found.startedAt <= now - TTL_MS;
    const live = found.answer ? !expired : !expired && (runningAlive(found, now) || found.fingerprint !== fingerprint);
    if (live) return found.answer ? { state: 'done', fingerprint: found.fingerprint, answer: found.answer } : { state: 'running', fingerprint: found.fingerprint };
    // A running entry nothing runs any more, taken over by a repeat of its request: its mark stays.
    const resumed = !found.answer && !expired;
    const beatAt = found.beatAt === undefined ? { $exists: false } : found.beatAt;
    const next: Entry = { ...fresh };
    if (resumed) {
      if (found.mark === undefined) delete next.mark;
      else next.mark = found.mark;
    }
    // Taken only as it was read: the same take (its start and last beat) and, for one taken over
    // while running, still without an answer. A try judged abandoned (its beats did not land) may
    // yet store its answer between this read and this write; that answer is then kept, not wiped
    // and the request run again (complete() changes the answer alone).
    const taken = await this.keys.replaceOne(found.answer ? { _id, startedAt: found.startedAt, beatAt } : { _id, startedAt: found.startedAt, beatAt, answer: null }, next);
    if (!taken.modifiedCount) return this.begin(scope, key, fingerprint, now, mark);
    this.running.set(_id, now);
    return resumed && found.mark !== undefined ? { state: 'started', earlier: found.mark } : { state: 'started' };
  }

  /** decisions.md §17: the stored answers `stale` picks get `redact(body)` (the port's redact). */
  async redact(stale: (body: string) => boolean, redact: (body: string) => string): Promise<number> {
    let n = 0;
    for await (const doc of this.keys.find({ answer: { $ne: null } }, { projection: { _id: 1, answer: 1 } })) {
      if (!doc.answer || !stale(doc.answer.body)) continue;
      await this.keys.updateOne({ _id: doc._id }, { $set: { 'answer.body': redact(doc.answer.body) } });
      n++;
    }
    return n;
  }

  async complete(scope: string, key: string, answer: StoredAnswer, startedAt?: number): Promise<void> {
    await this.keys.updateOne(this.ending(scope, key, startedAt), { $set: { answer } });
  }

  async abandon(scope: string, key: string, startedAt?: number): Promise<void> {
    await this.keys.updateOne({ ...this.ending(scope, key, startedAt), answer: null }, { $set: { abandoned: true } });
  }

  async release(scope: string, key: string, startedAt?: number): Promise<void> {
    await this.keys.deleteOne({ ...this.ending(scope, key, startedAt), answer: null });
  }

  /** Stops beating for the take that started at `startedAt` (not for a takeover since), and the filter of its entry (port.ts). */
  private ending(scope: string, key: string, startedAt: number | undefined): { _id: string; startedAt?: number } {
    const _id = `${scope}\n${key}`;
    if (startedAt === undefined || this.running.get(_id) === startedAt) this.running.delete(_id);
    return startedAt === undefined ? { _id } : { _id, startedAt };
  }

  async close(): Promise<void> {
    clearInterval(this.beat);
    await this.client?.close();
  }
}

function runningAlive(entry: Entry, now: number): boolean {
  if (entry.abandoned) return false;
  if (entry.beatAt === undefined) return entry.startedAt > now - STALE_MS;
  return entry.beatAt > now - ABANDONED_MS;
}

import type { RecordedEvent } from '../domain/shared/events.js';
import { KeyCache } from './key-cache.js';
import type { KeyStore } from './keys.js';
import { OpenedCache, type SealedParts } from './opened-cache.js';
import { type AppendResult, type EventLog, type ExpectedRevision, type NewEvent, NO_STREAM, StreamNotRewritable, type SubscribeOptions, type Subscription } from './port.js';
import { carriesPersonal, type Data, holdsSealed, openData, withValues } from './sealed-data.js';
import { erasedError, SEAL_THREAD, TurnSealer } from './sealed-turn.js';
import { Sealer } from './sealing.js';


/** The streams whose events hold personal fields: a constituent's (decisions.md §17). */
const sealed = (stream: string) => stream.startsWith('constituent-');

/** Unwrapped keys of live constituents kept in memory: a Sealer holds a 32-byte key, so about 10 MB at most. */
const CACHED_KEYS = 50_000;
/**
 * Keys made ahead of need: a constituent's first write makes the keys of the next ids too, in the
 * same transaction, as ids are handed out in order (commands/ids.ts), and the next ones in the
 * background half way through (makeAhead). A run of creations then seldom waits for the key
 * store's commit, rather than once per group of requests; a key made for an id another process
 * takes is found there, one never used is a random key no data was sealed under.
 */
const KEYS_AHEAD = 512;
/**
 * This process's own appends whose personal values are kept for the subscriptions that follow
 * them (OpenedCache): the projector and the dispatcher read an append a moment after it, so a
 * few thousand cover a burst of writes (about 1 KB each, a few MB in all).
 */
const RECENT_APPENDS = 4_096;

/**
 * Crypto-shredding at the log port (decisions.md §17), for a log whose events cannot be
 * rewritten (EventStoreDB): a constituent's personal fields (`fields` of a creation, `changes` of
 * an update) are stored sealed under that constituent's own data key (AES-256-GCM, bound to the
 * stream), and read back opened. Erasure (`rewriteStream`) destroys the key: from then on every
 * read of the stream, on any process, gives those fields as null and `erased: true`, as the
 * embedded log's rewrite does, while the ciphertext left in the log opens for no one.
 *
 * Keys of live records are cached in memory (the most recently used, bounded), so a write or a
 * read costs one AES-GCM operation per event, not a key store round trip; the keys a page of
 * events lacks are fetched in one read. A process erasing forgets its cached key at once; another
 * process's cache is dropped on its next read of the erasure itself, or of the destroyed key.
 */
export class SealingEventLog implements EventLog {
  private readonly cache: KeyCache;
  /** Subjects whose key is destroyed, as far as this process has seen: erasures are rare, and their keys never come back. */
  private readonly erased = new Set<string>();
  /** Key store requests under way, by subject, so that concurrent misses of one key ask once. */
  private readonly pending = new Map<string, Promise<LoadedKeys>>();
  /** The highest id whose key this process has asked to make ahead: a write below half a batch of it asks nothing. */
  private aheadTo = 0;
  /** The values of this process's recent appends, served to its subscriptions only (the reads of the API and the feed open). */
  private readonly recent = new OpenedCache(RECENT_APPENDS);
  /** The subscriptions running: an entry of `recent` every one of them has taken is let go of. */
  private following = 0;
  /** The seals of each turn's appends, made together on the sealing thread (sealed-turn.ts). */
  private readonly turns: TurnSealer;

  readStreamBackwards?: EventLog['readStreamBackwards'];
  streamRevision?: EventLog['streamRevision'];
  readStreamUntil?: EventLog['readStreamUntil'];
  readTeam?: EventLog['readTeam'];
  readTeamUpTo?: EventLog['readTeamUpTo'];
  ownWritesOnlySince?: EventLog['ownWritesOnlySince'];
  countAfter?: EventLog['countAfter'];
  failure?: EventLog['failure'];
  /**
   * EventStoreDB's team projection of the change feed (eventlog/esdb.ts), which the process that
   * projects checks at its start and every 30 s (runtime/team-feed.ts): passed through, since
   * checking and reporting it reads no event data. Its reads go through readTeam, opened.
   */
  teamFeed?: () => unknown;

  constructor(
    private readonly inner: EventLog,
    private readonly keys: KeyStore,
    /**
     * `sealThread`: the sealing thread's program (sealed-turn.ts); null seals on the main thread.
     * `cachedKeys`: how many keys are kept in memory (the tests' small caches).
     */
    options: { sealThread?: URL | null; cachedKeys?: number } = {},
  ) {
    this.cache = new KeyCache(options.cachedKeys ?? CACHED_KEYS);
    this.turns = new TurnSealer((stream) => this.erased.has(stream), options.sealThread === undefined ? SEAL_THREAD : options.sealThread);
    const i = inner;
    if (i.readStreamBackwards) this.readStreamBackwards = async (s, n) => this.openAll(await i.readStreamBackwards!(s, n));
    if (i.streamRevision) this.streamRevision = (s) => i.streamRevision!(s);
    if (i.readStreamUntil) this.readStreamUntil = async (s, p) => this.openAll(await i.readStreamUntil!(s, p));
    if (i.readTeam) this.readTeam = async (t, f, l, inc) => this.openAll(await i.readTeam!(t, f, l, inc));
    if (i.readTeamUpTo) this.readTeamUpTo = async (t, f, to, l) => this.openAll(await i.readTeamUpTo!(t, f, to, l));
    if (i.ownWritesOnlySince) this.ownWritesOnlySince = (p) => i.ownWritesOnlySince!(p);
    if (i.countAfter) this.countAfter = (p) => i.countAfter!(p);
    if (i.failure) this.failure = () => i.failure!();
    const teamFeed = (i as { teamFeed?: () => unknown }).teamFeed;
    if (typeof teamFeed === 'function') this.teamFeed = () => teamFeed.call(i);
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (!sealed(stream)) return this.inner.append(stream, events, expected);
    // A key in memory is taken at once: sealerToWrite's promise and turn only for a miss.
    const held = this.cache.get(stream);
    if (held) this.makeAhead(stream);
    const sealer = held ?? (await this.sealerToWrite(stream));
    // An erased constituent's key is gone, and no plaintext may take its place (decisions.md §17):
    // what can still be written there is what holds no personal value (its erasure's own record).
    if (!sealer && events.some((e) => carriesPersonal(e.data))) throw erasedError(stream);
    if (!sealer) return this.inner.append(stream, events, expected);
    const { out, parts } = await this.turns.seal(stream, events, sealer);
    // An erasure begun while the seal waited for its turn or was made on the sealing thread wins:
    // its key is destroyed, and no personal value may be written after it, even sealed under that key.
    if (this.erased.has(stream) && parts.some(Boolean)) throw erasedError(stream);
    // Kept before the append where its revisions are known (a new stream, an exact revision), since
    // the log may hand the events to its subscriptions before this append's answer is taken up
    // here. An entry serves only the very texts sealed here, so an append that fails leaves one
    // that can serve nothing; it is dropped all the same.
    const first = expected === NO_STREAM ? 0n : typeof expected === 'bigint' ? expected + 1n : null;
    if (first !== null) this.keep(stream, first, parts);
    let result: AppendResult;
    try {
      result = await this.inner.append(stream, out, expected);
    } catch (err) {
      if (first !== null) parts.forEach((p, i) => p && this.recent.delete(stream, first + BigInt(i), p));
      throw err;
    }
    // An erasure begun while the append was under way wins: its values are not kept.
    if (this.erased.has(stream)) this.recent.drop(stream);
    else if (first === null) this.keep(stream, result.nextExpectedRevision - BigInt(events.length - 1), parts);
    return result;
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    return this.openAll(await this.inner.readStream(stream));
  }

  subscribe(from: Parameters<EventLog['subscribe']>[0], handler: (e: RecordedEvent) => Promise<void> | void, options?: SubscribeOptions): Subscription {
    // Counted while it runs (an entry of `recent` every running one has taken is let go of):
    // until stop(), or until it stops for good by itself (onError), as one whose handler threw
    // does, which its owner may never stop (dispatcher/feed-waker.ts subscribes anew instead).
    this.following++;
    let following = true;
    const ended = () => {
      if (following) this.following--;
      following = false;
    };
    // Opened at once when no key need be fetched (this process's own append, or its key in
    // memory), without a promise's turn per event; never a synchronous throw, as before.
    const opening = (e: RecordedEvent) => {
      try {
        const ready = this.openNow(e);
        return ready ? handler(ready) : this.open(e).then(handler);
      } catch (err) {
        return Promise.reject(err);
      }
    };
    const onError = (err: unknown) => {
      ended();
      options?.onError?.(err);
    };
    let subscription: Subscription;
    try {
      subscription = this.inner.subscribe(from, opening, { ...options, onError });
    } catch (err) {
      ended();
      throw err;
    }
    return {
      stop: () => {
        ended();
        return subscription.stop();
      },
    };
  }

  head(): ReturnType<EventLog['head']> {
    return this.inner.head();
  }

  /**
   * Erasure: the stream's key is destroyed; its events now read with personal fields null. Another
   * stream (a message's delivery record) is rewritten by the log below where it can be, else
   * refused (StreamNotRewritable: EventStoreDB's events are immutable).
   */
  async rewriteStream(stream: string, data?: (event: RecordedEvent) => Record<string, unknown>): Promise<number> {
    if (!sealed(stream)) {
      if (data && this.inner.rewriteStream) return this.inner.rewriteStream(stream, data);
      throw new StreamNotRewritable(stream);
    }
    this.forget(stream);
    await this.keys.destroy(stream);
    return (await this.inner.readStream(stream)).length;
  }

  async close(): Promise<void> {
    // Appends waiting for their turn's seal, or on the sealing thread, go to the log first, as they would have before it closes.
    await this.turns.drain();
    // Keys being made ahead are let finish, so the key store does not close under its own commit.
    await Promise.allSettled(this.pending.values());
    return this.inner.close().finally(() => Promise.all([this.keys.close(), this.turns.close()]));
  }

  private keep(stream: string, first: bigint, parts: Array<SealedParts | null>): void {
    for (let i = 0; i < parts.length; i++) if (parts[i]) this.recent.set(stream, first + BigInt(i), parts[i]!);
  }

  private forget(stream: string): void {
    this.erased.add(stream);
    this.cache.delete(stream);
    this.recent.drop(stream);
  }

  /** The key to seal a write with, made on the stream's first write; null once erased. */
  private async sealerToWrite(stream: string): Promise<Sealer | null> {
    // A request under way may be a read, which makes no key: ask to make one once it is answered.
    for (let made = false; ; ) {
      const held = this.cache.get(stream);
      if (held) this.makeAhead(stream);
      if (held || this.erased.has(stream)) return held ?? null;
      const under = this.pending.get(stream);
      if (!under && made) throw new Error(`the key store made no key for ${stream}`);
      if (!under) made = true;
      // The key as the request answered it, not as the cache holds it after: with more keys
      // loaded meanwhile than it keeps, the cache may have let it go already.
      const got = (await (under ?? this.load([stream, ...this.ahead(stream)], true))).get(stream);
      if (got && !this.erased.has(stream)) {
        this.makeAhead(stream);
        return got;
      }
    }
  }

  /**
   * Half way through the keys made ahead, the next ones are made in the background, so that a
   * steady run of creations never waits for the key store. A failure there is not lost: the write
   * that needs one of those keys asks for it again, and fails with the store's error.
   */
  private makeAhead(stream: string): void {
    const id = idOf(stream);
    // Most writes: the keys half a batch ahead were asked for already (by a number, not a name
    // and three look-ups a write). A record older than that (an update) makes no keys ahead of it.
    if (id === null || id + KEYS_AHEAD / 2 <= this.aheadTo) return;
    const probe = `constituent-${id + KEYS_AHEAD / 2}`;
    if (this.cache.has(probe) || this.pending.has(probe) || this.erased.has(probe)) return;
    const next = this.ahead(stream, this.aheadTo);
    if (next.length) this.load(next, true).catch(() => {});
  }

  /**
   * The next ids' streams whose keys to make (KEYS_AHEAD). Those up to `asked` were asked for
   * already, so only the ones past it are named, and looked up only as erased (made ahead: 256
   * names and look-ups a batch, not 511 names and 1,533 look-ups); one of them in memory or under
   * way (a read's fetch) is asked for again, and the store gives the key it has. A write whose
   * key is missing (`asked` 0) names every id it lacks: after a batch that failed, say.
   */
  private ahead(stream: string, asked = 0): string[] {
    const id = idOf(stream);
    if (id === null) return [];
    this.aheadTo = Math.max(this.aheadTo, id + KEYS_AHEAD - 1);
    const out: string[] = [];
    for (let n = Math.max(id, asked) + 1; n < id + KEYS_AHEAD; n++) {
      const next = `constituent-${n}`;
      if (this.erased.has(next) || (!asked && (this.cache.has(next) || this.pending.has(next)))) continue;
      out.push(next);
    }
    return out;
  }

  /**
   * Fetches (or makes) the keys of `subjects` in one request, into the cache, and answers them:
   * whoever waited on the request takes its key from the answer, since keys loaded meanwhile past
   * what the cache keeps (many requests at once, 512 made ahead each) may have evicted it.
   */
  private load(subjects: string[], create: boolean): Promise<LoadedKeys> {
    const asked = this.keys.keysFor(subjects, create).then((keys) => {
      const loaded = new Map<string, Sealer>();
      for (const [subject, key] of keys) {
        if (!key) this.forget(subject);
        // An erasure that began while the request was out wins over the key it brings back.
        else if (!this.erased.has(subject)) {
          const sealer = new Sealer(key);
          this.cache.set(subject, sealer);
          loaded.set(subject, sealer);
        }
      }
      return loaded;
    });
    const settled = asked.finally(() => {
      for (const s of subjects) if (this.pending.get(s) === settled) this.pending.delete(s);
    });
    for (const s of subjects) this.pending.set(s, settled);
    return settled;
  }

  private async openAll(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const lacking = new Set<string>();
    const waits: Array<Promise<LoadedKeys>> = [];
    // The keys in memory now are taken now: the loads this read waits on, or others meanwhile,
    // may push them out of the cache before it opens the page.
    const loaded = new Map<string, Sealer>();
    for (const e of events) {
      if (!sealed(e.stream)) continue;
      this.noteErasure(e);
      if (!holdsSealed(e.data as Data) || lacking.has(e.stream) || loaded.has(e.stream) || this.erased.has(e.stream)) continue;
      const held = this.cache.get(e.stream);
      if (held) {
        loaded.set(e.stream, held);
        continue;
      }
      const under = this.pending.get(e.stream);
      if (under) waits.push(under);
      else lacking.add(e.stream);
    }
    if (lacking.size) waits.push(this.load([...lacking], false));
    for (const keys of await Promise.all(waits)) for (const [subject, sealer] of keys) loaded.set(subject, sealer);
    return events.map((e) => this.opened(e, loaded));
  }

  /** A subscription's event opened from this process's recent appends or with a key in memory; null when its key must be fetched. */
  private openNow(e: RecordedEvent): RecordedEvent | null {
    if (!sealed(e.stream)) return e;
    this.noteErasure(e);
    const data = e.data as Data;
    if (!holdsSealed(data) || this.erased.has(e.stream)) return this.opened(e);
    if (!this.cache.has(e.stream)) return null;
    // Served only while the key is held too: a key gone from the cache is fetched again, and the
    // store's answer (destroyed by another process's erasure, say) then decides, not these values.
    const mine = this.recent.get(e.stream, e.revision, data.sealed as Data);
    if (!mine) return this.opened(e);
    // Taken by every subscription: let go of now, not kept alive (and promoted by the young
    // generation's collections) until 4,096 appends later. A subscription that comes to it after
    // (one that stopped and started again) opens the event instead.
    if ((mine.taken = (mine.taken ?? 0) + 1) >= this.following) this.recent.delete(e.stream, e.revision, mine);
    if (mine.appended) return { ...e, data: mine.appended };
    // The log hands each of its followers in this process the same event object, as the plain
    // log does: the values are put back once for all of them, not once per subscription.
    if (mine.openedFrom !== data) {
      mine.opened = withValues(data, (part) => mine.values[part]);
      mine.openedFrom = data;
    }
    return { ...e, data: mine.opened! };
  }

  private async open(e: RecordedEvent): Promise<RecordedEvent> {
    if (!sealed(e.stream)) return e;
    this.noteErasure(e);
    if (holdsSealed(e.data as Data) && !this.erased.has(e.stream) && !this.cache.has(e.stream)) return this.opened(e, await (this.pending.get(e.stream) ?? this.load([e.stream], false)));
    return this.opened(e);
  }

  /** Another process erased it: forget the key this one may hold. */
  private noteErasure(e: RecordedEvent): void {
    if (e.type === 'ConstituentErased') this.forget(e.stream);
  }

  /**
   * The event opened with the key `loaded` holds (what a page read found in memory or waited
   * for), else the cache's; none (destroyed, or never made): erased.
   */
  private opened(e: RecordedEvent, loaded?: LoadedKeys): RecordedEvent {
    if (!sealed(e.stream) || !holdsSealed(e.data as Data)) return e;
    const sealer = this.erased.has(e.stream) ? null : (loaded?.get(e.stream) ?? this.cache.get(e.stream) ?? null);
    return { ...e, data: openData(e.data as Data, sealer, e.stream) };
  }
}

/** The keys a key-store request brought back, by subject: those it found or made, and no erasure had begun for. */
type LoadedKeys = ReadonlyMap<string, Sealer>;

/** A constituent stream's id, or null for a stream named otherwise. */
function idOf(stream: string): number | null {
  const from = 'constituent-'.length;
  // Digits only, and few enough to be an exact number: read without a regular expression or a substring, at every write.
  if (!stream.startsWith('constituent-') || stream.length === from || stream.length > from + 15) return null;
  let id = 0;
  for (let i = from; i < stream.length; i++) {
    const digit = stream.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return null;
    id = id * 10 + digit;
  }
  return id;
}

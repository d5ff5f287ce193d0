import { erasedData } from '../domain/constituent/erased.js';
import { ERASED } from '../domain/constituent/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import { WEBHOOK_TYPES } from '../domain/webhook-endpoint/types.js';
import type { Projector } from '../projections/engine/projector.js';
import { and, type CollectionDef, type Doc, eq, type Filter, gte, lte, type ReadStore } from '../projections/store/port.js';
import { mayFire } from './catalog.js';
import type { EnvelopeRebuild } from './erasure.js';
import { ENVELOPE_RULES, envelopesIn } from './envelope.js';
import { ALL, type Cursor, type FeedQuery, type JsonPage } from './feed-cursor.js';
import { asOfFirst } from './feed-table.js';
import type { StreamReader } from './history.js';

/**
 * The change feed as a read model of the read store (MongoDB, and the in-memory store of an
 * in-memory data dir or of EventStoreDB alone): one document per webhook envelope, its JSON as
 * the webhook sends it, written by a projector beside the other read models and with their
 * checkpoints. A page is one keyed read from the cursor; no event is read, so on a sealed log
 * (decisions.md §17) no feed read opens one: the projector opened each event once. The embedded
 * data dir keeps the same envelopes in a table of its own (feed-table.ts).
 *
 * `seq` is the envelope's number (decisions.md §7: log position times 10 plus the type's index),
 * unique in the log, as fixed-width decimal text: every store orders text alike, and a position
 * may pass what a double holds. `commit` is the event's commit position, so that a cursor given
 * here names the log position the log itself gives (on EventStoreDB the events of one append
 * share it, and a replay compares it).
 */
export const FEED_MODEL: CollectionDef = { name: 'changeFeed', idField: 'seq', indexes: [['team', 'seq']], search: [] };

export interface FeedDoc {
  seq: string;
  team: number;
  commit: string;
  /** Unix ms of the change, for an export's date-times. */
  at: number;
  type: string;
  json: string;
}

/** Digits of 2^64: any envelope number a cursor may name (feed-cursor.ts) fits. */
const DIGITS = 20;
const seqText = (seq: bigint): string => seq.toString().padStart(DIGITS, '0');

/**
 * The projector: every envelope a log event fires, built by the dispatcher's own code as the
 * embedded table's projector builds them. A replay puts the same documents again (by `seq`), so
 * it is idempotent; after an erasure, a replay builds them from the log as the erasure left it.
 * ConstituentErased rebuilds the envelopes of the person's own stream (decisions.md §17): every
 * build sharing the store (another version of this collection, a catch-up that projected them
 * before the erasure) cleans its own collection, not only the one the erasure's process rewrites.
 */
export function feedModelProjector(log: StreamReader): Projector {
  const putEnvelopes = async (event: RecordedEvent, store: ReadStore, streams: StreamReader = log): Promise<number> => {
    const envelopes = await envelopesIn(asOfFirst(streams, event), event);
    const at = Date.parse(event.metadata.at);
    const commit = event.position.commit.toString();
    for (let i = 0; i < envelopes.length; i++) {
      const e = envelopes[i];
      const doc: FeedDoc = { seq: seqText(event.position.prepare * 10n + BigInt(i)), team: e.team, commit, at, type: e.type, json: JSON.stringify(e) };
      await store.put(FEED_MODEL.name, doc as unknown as Doc);
    }
    return envelopes.length;
  };
  return {
    name: 'change-feed',
    // 1, plus the envelopes' own rules (envelope.ts ENVELOPE_RULES), as the embedded table's.
    version: 1 + ENVELOPE_RULES,
    collections: [FEED_MODEL],
    async apply(event, store) {
      if (!mayFire(event)) return;
      if (event.type === ERASED) await rebuildErased(event, store);
      await putEnvelopes(event, store);
    },
  };

  async function rebuildErased(erasure: RecordedEvent, store: ReadStore): Promise<void> {
    const team = erasure.metadata.team;
    // The person's stream as the erasure leaves it: a build may apply ConstituentErased before the
    // erasure has rewritten the log (it is appended first), and must not rebuild the plaintext.
    const erased = (events: RecordedEvent[]) => events.map((e) => (e.type === ERASED ? e : { ...e, data: erasedData(e) }));
    const until = log.readStreamUntil;
    const reader: StreamReader = {
      readStream: async (s) => (s === erasure.stream ? erased(await log.readStream(s)) : log.readStream(s)),
      readStreamUntil: until && (async (s, p) => (s === erasure.stream ? erased(await until.call(log, s, p)) : until.call(log, s, p))),
    };
    for (const e of erased(await log.readStream(erasure.stream))) {
      if (e.position.prepare >= erasure.position.prepare || !mayFire(e)) continue;
      const kept = await putEnvelopes(e, store, reader);
      // An envelope that the erased event fires no longer goes, as the erasure's rewrite drops it.
      const base = e.position.prepare * 10n;
      const range = and(eq('team', team), gte('seq', seqText(base + BigInt(kept))), lte('seq', seqText(base + 9n)));
      for (const doc of await scanOf(store, range, 10)) await store.remove(FEED_MODEL.name, doc.seq);
    }
  }
}

async function scanOf(store: ReadStore, filter: Filter, limit: number): Promise<FeedDoc[]> {
  if (store.scan) return store.scan<FeedDoc>(FEED_MODEL.name, filter, 'seq', limit);
  const page = await store.find<FeedDoc>({ collection: FEED_MODEL.name, filter, sort: [{ field: 'seq', dir: 'asc' }], page: { page: 1, pageSize: limit } });
  return page.items;
}

/** Documents an erasure's rewrite reads per look. */
const REWRITE_BATCH = 1_000;

/** A team's documents in `store`, in envelope order, a batch of at most REWRITE_BATCH at a time. */
async function* teamBatches(store: ReadStore, team: number): AsyncGenerator<FeedDoc[]> {
  for (let from = 0n; ; ) {
    const docs = await scanOf(store, and(eq('team', team), gte('seq', seqText(from))), REWRITE_BATCH);
    yield docs;
    if (docs.length < REWRITE_BATCH) return;
    from = BigInt(docs[docs.length - 1].seq) + 1n;
  }
}

/** The envelope number just before the first one a cursor has not given: `after` is exclusive. */
const lastGiven = (c: Cursor): bigint => (c.position ? c.position.prepare * 10n + BigInt(c.seen) - 1n : -1n);

const cursorOf = (doc: FeedDoc): Cursor => {
  const seq = BigInt(doc.seq);
  return { position: { commit: BigInt(doc.commit), prepare: seq / 10n }, seen: Number(seq % 10n) + 1 };
};

/**
 * The reader (and an erasure's rewriter) of the read model. `settle` waits until the read model
 * holds every event of the log as it stands (its projector's checkpoint at the log's head), so a
 * page read after a write's answer holds that write, as the other reads do.
 */
export class FeedModel {
  constructor(
    private readonly store: ReadStore,
    private readonly settle: () => Promise<void>,
  ) {}

  /** One page, as ChangeFeed.page answers it from the log: the same envelopes, `next` and `hasMore`. */
  async page(team: number, q: FeedQuery): Promise<JsonPage> {
    await this.settle();
    const until = q.until?.position ? q.until.position.prepare * 10n + BigInt(Math.min(q.until.seen, ALL)) - 1n : null;
    if (until !== null && until < 0n) return { changes: [], next: q.after, hasMore: false };
    const types: Filter | undefined = q.types ? { op: 'in', field: 'type', values: WEBHOOK_TYPES.filter(q.types) } : undefined;
    const filter = and(
      eq('team', team),
      gte('seq', seqText(lastGiven(q.after) + 1n)),
      until !== null && lte('seq', seqText(until)),
      types,
      q.at && gte('at', q.at.from),
      q.at && lte('at', q.at.to),
    );
    // The page and one more, to learn whether more follow.
    const docs = await scanOf(this.store, filter, q.limit + 1);
    const changes: string[] = [];
    let next = q.after;
    for (const doc of docs.slice(0, q.limit)) {
      changes.push(doc.json);
      next = cursorOf(doc);
    }
    return { changes, next, hasMore: docs.length > q.limit };
  }

  /**
   * decisions.md §17: the team's envelopes that `stale` picks (by envelope number or JSON) are
   * built again by `rebuild` from the log as the erasure left it, or removed when they fire no
   * longer; each batch's writes are one transaction of their own where the store has them
   * (write), else each write is the store's own (acknowledged by MongoDB before the next).
   * Answers how many changed.
   */
  async rewrite(team: number, stale: (seq: bigint, json: string) => boolean, rebuild: EnvelopeRebuild): Promise<number> {
    let changed = 0;
    for await (const docs of teamBatches(this.store, team)) {
      const writes: Array<{ doc: FeedDoc; json: string | null }> = [];
      for (const doc of docs) if (stale(BigInt(doc.seq), doc.json)) writes.push({ doc, json: await rebuild(BigInt(doc.seq)) });
      if (writes.length) await this.write(writes);
      changed += writes.length;
    }
    return changed;
  }

  /**
   * A batch of the rewrite's writes, in a transaction of its own where the store has them: on the
   * in-memory SQLite store it waits for the projector's open chunk to end (its transaction spans
   * the projector's reads of the log), so that chunk failing cannot roll the rewrite back and
   * bring the erased envelopes back after the erasure answered. The envelopes are built before,
   * outside any transaction.
   */
  private async write(writes: ReadonlyArray<{ doc: FeedDoc; json: string | null }>): Promise<void> {
    const apply = async (store: ReadStore) => {
      for (const { doc, json } of writes) {
        if (json) await store.put(FEED_MODEL.name, { ...doc, json } as unknown as Doc);
        else await store.remove(FEED_MODEL.name, doc.seq);
      }
    };
    const transactions = (await this.store.transactions?.()) ?? null;
    await (transactions ? transactions.run(apply) : apply(this.store));
  }

  /**
   * decisions.md §17 for the builds of other versions sharing the store (a blue/green deploy):
   * their envelopes may be made otherwise than this build makes them, so each of the team's
   * documents there that `stale` picks (by its JSON text) is not built again but rewritten in
   * place by `redact`. Their documents are taken to keep `team` and `seq`, the collection's key
   * and index. Answers how many changed.
   */
  async redactOtherVersions(team: number, stale: (text: string) => boolean, redact: (doc: Doc) => Doc): Promise<number> {
    let changed = 0;
    for (const store of (await this.store.otherVersions?.(FEED_MODEL.name)) ?? []) {
      for await (const docs of teamBatches(store, team)) {
        for (const doc of docs) {
          if (!stale(JSON.stringify(doc))) continue;
          await store.put(FEED_MODEL.name, redact(doc as unknown as Doc));
          changed++;
        }
      }
    }
    return changed;
  }
}

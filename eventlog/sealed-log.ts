import { PERSONAL_FIELDS } from '../domain/constituent/rules.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { KeyStore } from './keys.js';
import type { AppendResult, EventLog, ExpectedRevision, NewEvent, SubscribeOptions, Subscription } from './port.js';
import { Sealer } from './sealing.js';

type Data = Record<string, unknown>;

/** The streams whose events hold personal fields: a constituent's (decisions.md §17). */
const sealed = (stream: string) => stream.startsWith('constituent-');

/**
 * Crypto-shredding at the log port (decisions.md §17), for a log whose events cannot be
 * rewritten (EventStoreDB): a constituent's personal fields (`fields` of a creation, `changes` of
 * an update) are stored sealed under that constituent's own data key (AES-256-GCM, bound to the
 * stream), and read back opened. Erasure (`rewriteStream`) destroys the key: from then on every
 * read of the stream, on any process, gives those fields as null and `erased: true`, as the
 * embedded log's rewrite does, while the ciphertext left in the log opens for no one.
 *
 * Keys of live records are cached in memory, so a write or a read costs one AES-GCM operation
 * per event (sealData), not a key store round trip. A process erasing drops its own cached key;
 * another process's cache is dropped on its next read of the erasure itself.
 */
export class SealingEventLog implements EventLog {
  private readonly cache = new Map<string, Sealer | null>();

  readStreamBackwards?: EventLog['readStreamBackwards'];
  streamRevision?: EventLog['streamRevision'];
  readStreamUntil?: EventLog['readStreamUntil'];
  readTeam?: EventLog['readTeam'];
  ownWritesOnlySince?: EventLog['ownWritesOnlySince'];
  countAfter?: EventLog['countAfter'];
  failure?: EventLog['failure'];

  constructor(
    private readonly inner: EventLog,
    private readonly keys: KeyStore,
  ) {
    const i = inner;
    if (i.readStreamBackwards) this.readStreamBackwards = async (s, n) => this.openAll(await i.readStreamBackwards!(s, n));
    if (i.streamRevision) this.streamRevision = (s) => i.streamRevision!(s);
    if (i.readStreamUntil) this.readStreamUntil = async (s, p) => this.openAll(await i.readStreamUntil!(s, p));
    if (i.readTeam) this.readTeam = async (t, f, l, inc) => this.openAll(await i.readTeam!(t, f, l, inc));
    if (i.ownWritesOnlySince) this.ownWritesOnlySince = (p) => i.ownWritesOnlySince!(p);
    if (i.countAfter) this.countAfter = (p) => i.countAfter!(p);
    if (i.failure) this.failure = () => i.failure!();
  }

  async append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult> {
    if (!sealed(stream)) return this.inner.append(stream, events, expected);
    const sealer = await this.sealerFor(stream, true);
    const out = events.map((e) => ({ ...e, data: sealer ? sealData(e.data, sealer, stream) : e.data }));
    return this.inner.append(stream, out, expected);
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    return this.openAll(await this.inner.readStream(stream));
  }

  subscribe(from: Parameters<EventLog['subscribe']>[0], handler: (e: RecordedEvent) => Promise<void> | void, options?: SubscribeOptions): Subscription {
    return this.inner.subscribe(from, async (e) => handler(await this.open(e)), options);
  }

  head(): ReturnType<EventLog['head']> {
    return this.inner.head();
  }

  /** Erasure: the stream's key is destroyed; its events now read with personal fields null. */
  async rewriteStream(stream: string): Promise<number> {
    if (!sealed(stream)) throw new Error(`only a constituent's stream can be erased (${stream})`);
    await this.keys.destroy(stream);
    this.cache.set(stream, null);
    return (await this.inner.readStream(stream)).length;
  }

  close(): Promise<void> {
    return this.inner.close().finally(() => this.keys.close());
  }

  private async sealerFor(stream: string, create: boolean): Promise<Sealer | null> {
    const held = this.cache.get(stream);
    if (held !== undefined && (held !== null || !create)) return held;
    const key = await this.keys.keyFor(stream, create);
    const sealer = key ? new Sealer(key) : null;
    if (key || create) this.cache.set(stream, sealer);
    return sealer;
  }

  private async openAll(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    return Promise.all(events.map((e) => this.open(e)));
  }

  private async open(e: RecordedEvent): Promise<RecordedEvent> {
    if (!sealed(e.stream)) return e;
    // Another process erased it: forget the key this one may hold.
    if (e.type === 'ConstituentErased') this.cache.set(e.stream, null);
    if (!holdsSealed(e.data as Data)) return e;
    return { ...e, data: openData(e.data as Data, await this.sealerFor(e.stream, false), e.stream) };
  }
}

const PARTS = ['fields', 'changes'] as const;

/**
 * An event's data with the personal values of `fields` and `changes` moved, one sealed text per
 * part, into `sealed`: the parts keep every field name, with null in place of a sealed value, so
 * one AES-GCM operation covers an event whatever the number of fields.
 */
function sealData(data: Data, sealer: Sealer, stream: string): Data {
  let out: Data | null = null;
  for (const part of PARTS) {
    const values = data[part];
    if (!values || typeof values !== 'object') continue;
    const hidden: Data = {};
    const shown: Data = { ...(values as Data) };
    for (const name of PERSONAL_FIELDS) {
      const v = shown[name];
      if (v === undefined || v === null) continue;
      hidden[name] = v;
      shown[name] = null;
    }
    if (!Object.keys(hidden).length) continue;
    out ??= { ...data, sealed: {} };
    out[part] = shown;
    (out.sealed as Data)[part] = sealer.sealText(JSON.stringify(hidden), `${stream}:${part}`);
  }
  return out ?? data;
}

/** The data as it was appended; `sealer` null (the key destroyed): the personal values stay null, and `erased: true`. */
function openData(data: Data, sealer: Sealer | null, stream: string): Data {
  const { sealed: parts, ...out } = data as Data & { sealed: Record<string, string> };
  if (!sealer) return { ...out, erased: true };
  for (const part of PARTS) {
    const text = parts[part];
    if (text) out[part] = { ...(out[part] as Data), ...(JSON.parse(sealer.openText(text, `${stream}:${part}`)) as Data) };
  }
  return out;
}

function holdsSealed(data: Data): boolean {
  return Boolean(data.sealed && typeof data.sealed === 'object');
}

import { StreamNotFoundError, type EventStoreDBClient } from '@eventstore/db-client';
import type { Db, Document } from 'mongodb';
import { describe, expect, it } from 'vitest';
import type { CommandDeps } from '../../commands/deps.js';
import type { IdAllocator } from '../../commands/ids.js';
import { createEndpoint, rotateEndpointSecret } from '../../commands/webhook-endpoints.js';
import type { WriteContext } from '../../commands/context.js';
import { openSigningSecrets } from '../../dispatcher/secrets.js';
import type { LoggedEvent } from '../../domain/events.js';
import { emptyEndpoint, secretBinding, webhookEndpointStream } from '../../domain/webhook-endpoint/events.js';
import { EsdbEventLog } from '../../eventlog/esdb.js';
import { Sealer } from '../../eventlog/sealing.js';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc, webhookEndpointsProjection } from '../../projections/webhook-endpoints.js';

/**
 * decisions.md §17 on the production stack: the same commands and projector that seal secrets in
 * the embedded files write to EventStoreDB and MongoDB, so what those servers are sent holds
 * only sealed secrets. Both are scripted here at their client's narrow interface (the container
 * suites run the adapters for real where Docker is).
 */

/** An EventStoreDB client keeping each stream's appends as the server would receive them. */
function scriptedEsdb() {
  const streams = new Map<string, Array<{ type: string; data: unknown; metadata: unknown }>>();
  let position = 100n;
  const client = {
    async appendToStream(stream: string, events: Array<{ type: string; data: unknown; metadata: unknown }>) {
      const kept = streams.get(stream) ?? [];
      // What goes over the wire: the events' JSON.
      kept.push(...events.map((e) => JSON.parse(JSON.stringify({ type: e.type, data: e.data, metadata: e.metadata }))));
      streams.set(stream, kept);
      position += 10n;
      return { success: true, nextExpectedRevision: BigInt(kept.length - 1), position: { commit: position, prepare: position } };
    },
    readStream(stream: string) {
      const kept = streams.get(stream);
      return (async function* () {
        if (!kept) throw new StreamNotFoundError(undefined, stream);
        for (const [i, e] of kept.entries())
          yield { event: { streamId: stream, id: `e${i}`, isJson: true, revision: BigInt(i), type: e.type, created: new Date(), data: e.data, metadata: e.metadata, position: { commit: BigInt(i + 1), prepare: BigInt(i + 1) } } };
      })();
    },
    async dispose() {},
  };
  return { log: new EsdbEventLog(client as unknown as EventStoreDBClient), streams };
}

/** A MongoDB database whose collections keep what replaceOne is sent, and answer findOne from it. */
function scriptedMongo() {
  const sent: Document[] = [];
  const docs = new Map<string, Document>();
  const collection = {
    createIndexes: async () => undefined,
    find: () => ({ [Symbol.asyncIterator]: async function* () {} }),
    replaceOne: async (filter: { _id: string }, doc: Document) => {
      sent.push(JSON.parse(JSON.stringify(doc)));
      docs.set(filter._id, doc);
    },
    findOne: async (filter: { _id: string }) => {
      const doc = docs.get(filter._id);
      if (!doc) return null;
      const { _id, _ngrams, ...rest } = doc;
      return rest;
    },
  };
  return { store: new MongoReadStore({ collection: () => collection } as unknown as Db), sent };
}

describe('signing secrets sealed on EventStoreDB and MongoDB', () => {
  it('appends and projects only sealed secrets, every generation, which open to the plaintext the commands answered', async () => {
    const esdb = scriptedEsdb();
    const mongo = scriptedMongo();
    await mongo.store.defineCollection(webhookEndpointsProjection.collections[0]);
    const mainSealer = new Sealer(Sealer.newKey());
    const deps: CommandDeps = {
      log: esdb.log,
      store: mongo.store,
      ids: { next: async () => 42 } as unknown as IdAllocator,
      settle: async () => undefined,
      checkWebhookUrl: async () => null,
      mainSealer,
    };
    const ctx: WriteContext = { team: 3, source: 'Application', keyName: null, correlationId: 'c', now: new Date() };
    const { id, secret: first } = await createEndpoint(deps, ctx, { url: 'https://hooks.example.org/in', events: ['*'] });
    const second = await rotateEndpointSecret(deps, ctx, id, 600);

    const appended = esdb.streams.get(webhookEndpointStream(id))!;
    expect(appended.map((e) => e.type)).toEqual(['WebhookEndpointCreated', 'WebhookEndpointSecretRotated']);
    for (const e of await esdb.log.readStream(webhookEndpointStream(id))) await webhookEndpointsProjection.apply(e as LoggedEvent<'webhook_endpoint'>, mongo.store);

    const wire = JSON.stringify([appended, mongo.sent]);
    for (const plain of [first, second]) {
      expect(wire).not.toContain(plain);
      expect(wire).not.toContain(plain.slice('whsec_'.length));
    }
    const sealed = [...appended.map((e) => (e.data as { secret: string }).secret), ...mongo.sent.flatMap((d) => (d._secrets as Array<{ secret: string }>).map((s) => s.secret))];
    expect(sealed).toHaveLength(2 + 1 + 2);
    expect(sealed.every((s) => Sealer.isSealedText(s))).toBe(true);

    const doc = await mongo.store.get<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS, id);
    const ep = { ...emptyEndpoint(), id, secrets: doc!._secrets };
    expect(openSigningSecrets(mainSealer, ep, new Date())).toEqual([second, first]);
    expect(() => openSigningSecrets(new Sealer(Sealer.newKey()), ep, new Date())).toThrow(/sealed under another main key/);
  });
});

describe('opening a stored secret', () => {
  it('opens each stored entry once per key while the worker keeps it, still bound to its endpoint', () => {
    const sealer = new Sealer(Sealer.newKey());
    let opens = 0;
    const openText = sealer.openText.bind(sealer);
    sealer.openText = (sealed, associated) => (opens++, openText(sealed, associated));
    const entry = { secret: sealer.sealText('whsec_once', secretBinding(5, 1)), expiresAt: null, generation: 1 };
    const ep = { ...emptyEndpoint(), id: 5, secrets: [entry] };
    for (let i = 0; i < 3; i++) expect(openSigningSecrets(sealer, ep, new Date())).toEqual(['whsec_once']);
    expect(opens).toBe(1);
    expect(() => openSigningSecrets(sealer, { ...ep, id: 6 }, new Date())).toThrow(/endpoint 6's signing secret/);
    expect(() => openSigningSecrets(new Sealer(Sealer.newKey()), ep, new Date())).toThrow(/sealed under another main key/);
    // A copy of the entry (a reloaded endpoint) is opened afresh.
    expect(openSigningSecrets(sealer, { ...ep, secrets: [{ ...entry }] }, new Date())).toEqual(['whsec_once']);
    expect(opens).toBe(3);
  });
});

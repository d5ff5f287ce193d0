import { type ConsumerConfig, JetStreamApiCodes, JetStreamApiError, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream';
import { isDeepStrictEqual } from 'node:util';
import { Backoff, DEFAULT_RETRY } from '../../eventlog/backoff.js';

export interface DefineOptions {
  /** Attempts at an `info()` that fails for another reason than "not found" (a server starting, a time-out). */
  attempts?: number;
  /** The wait between them, doubling. */
  retryMs?: number;
}

const notFound = (err: unknown, code: number) => err instanceof JetStreamApiError && err.code === code;

/** The fields of `want` whose values `have` does not share. */
function differing(have: Record<string, unknown>, want: Record<string, unknown>): string[] {
  return Object.keys(want).filter((k) => !isDeepStrictEqual(have[k], want[k]));
}

/**
 * Makes a stream or consumer follow its configuration: created only when the server
 * says it is not found, updated where an existing one differs (a changed ack wait, a longer
 * duplicate window), kept as it is otherwise. Any other failure of the look-up is tried again:
 * turning it into a create fails with "already in use" (10058) and stopped the start. A create
 * that fails is looked up again too: another process starting beside this one (a rolling deploy,
 * two workers) may have created it between the look-up and the create, which the server refuses
 * as "subjects overlap with an existing stream" (10065) or "already in use"; the next look-up
 * finds it. A create that fails on every attempt fails the start with the server's reason.
 */
async function define(what: string, look: () => Promise<Record<string, unknown>>, missing: (err: unknown) => boolean, add: () => Promise<unknown>, update: (have: Record<string, unknown>) => Promise<unknown>, want: Record<string, unknown>, options: DefineOptions): Promise<void> {
  const attempts = options.attempts ?? 5;
  const backoff = new Backoff({ initialMs: options.retryMs ?? 250, maxMs: DEFAULT_RETRY.maxMs });
  for (let attempt = 1; ; attempt++) {
    let have: Record<string, unknown>;
    try {
      have = await look();
    } catch (err) {
      if (missing(err)) {
        try {
          await add();
          return;
        } catch (addErr) {
          if (attempt >= attempts) throw new Error(`${what}: could not create it (${addErr instanceof Error ? addErr.message : String(addErr)})`, { cause: addErr });
          continue;
        }
      }
      if (attempt >= attempts) throw new Error(`${what}: could not look it up (${err instanceof Error ? err.message : String(err)})`, { cause: err });
      await new Promise((r) => setTimeout(r, backoff.next()));
      continue;
    }
    if (differing(have, want).length) await update(have);
    return;
  }
}

export function defineStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }, options: DefineOptions = {}): Promise<void> {
  return define(
    `stream ${config.name}`,
    async () => (await jsm.streams.info(config.name)).config as unknown as Record<string, unknown>,
    (err) => notFound(err, JetStreamApiCodes.StreamNotFound),
    () => jsm.streams.add(config),
    (have) => jsm.streams.update(config.name, { ...have, ...config } as never),
    config,
    options,
  );
}

export function defineConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }, options: DefineOptions = {}): Promise<void> {
  return define(
    `consumer ${stream}/${config.durable_name}`,
    async () => (await jsm.consumers.info(stream, config.durable_name)).config as unknown as Record<string, unknown>,
    (err) => notFound(err, JetStreamApiCodes.ConsumerNotFound),
    () => jsm.consumers.add(stream, config),
    (have) => jsm.consumers.update(stream, config.durable_name, { ...have, ...config } as never),
    config,
    options,
  );
}

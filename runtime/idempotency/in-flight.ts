import type { Begun, IdempotencyStore, StoredAnswer } from './port.js';

type Rule = { stale: (body: string) => boolean; redact: (body: string) => string };

/**
 * An erasure redacts the answers a store holds (decisions.md §17), but a request that began
 * before it may still be running with the person's values in its answer, and would store them
 * after the redaction: a copy the erasure promised is gone. This store remembers which entries
 * it began and has not yet completed or released, gives each the rules of every redaction made
 * while it ran, and applies them to its answer before the store keeps it. A request that begins
 * after the redaction runs against the rewritten log and read models, so it has nothing to hide.
 * Memory only: the rules hold the values until the requests they concern end.
 */
export class InFlightRedaction implements IdempotencyStore {
  /** The rules of each running entry, with the start of its take (a late end of a try taken over since keeps the takeover's). */
  private readonly running = new Map<string, { at: number; rules: Rule[] }>();
  /** Answers handed to the store and not yet kept: a redaction waits for them, so it sees them. */
  private readonly storing = new Set<Promise<void>>();

  constructor(private readonly inner: IdempotencyStore) {}

  async begin(scope: string, key: string, fingerprint: string, now: number, mark?: string): Promise<Begun> {
    const begun = await this.inner.begin(scope, key, fingerprint, now, mark);
    if (begun.state === 'started') this.running.set(entry(scope, key), { at: now, rules: [] });
    return begun;
  }

  complete(scope: string, key: string, answer: StoredAnswer, startedAt?: number): Promise<void> {
    const rules = this.ended(scope, key, startedAt);
    let body = answer.body;
    for (const rule of rules) if (rule.stale(body)) body = rule.redact(body);
    const stored = this.inner.complete(scope, key, body === answer.body ? answer : { ...answer, body }, startedAt);
    const tracked = stored.then(
      () => void this.storing.delete(tracked),
      () => void this.storing.delete(tracked),
    );
    this.storing.add(tracked);
    return stored;
  }

  release(scope: string, key: string, startedAt?: number): Promise<void> {
    this.ended(scope, key, startedAt);
    return this.inner.release(scope, key, startedAt);
  }

  abandon(scope: string, key: string, startedAt?: number): Promise<void> {
    this.ended(scope, key, startedAt);
    return this.inner.abandon(scope, key, startedAt);
  }

  /** The rules of the take that started at `startedAt` (any, if absent), no longer running. */
  private ended(scope: string, key: string, startedAt: number | undefined): Rule[] {
    const at = entry(scope, key);
    const running = this.running.get(at);
    if (!running || (startedAt !== undefined && running.at !== startedAt)) return [];
    this.running.delete(at);
    return running.rules;
  }

  async redact(stale: (body: string) => boolean, redact: (body: string) => string): Promise<number> {
    // A running request gets the rule; an answer already on its way to the store is waited for,
    // so the rewrite below finds it there.
    for (const { rules } of this.running.values()) rules.push({ stale, redact });
    await Promise.all(this.storing);
    return (await this.inner.redact?.(stale, redact)) ?? 0;
  }

  close(): Promise<void> {
    this.running.clear();
    return this.inner.close();
  }
}

const entry = (scope: string, key: string) => `${scope}\u0000${key}`;

import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CATEGORIES } from '../domain/events.js';
import type { FollowerState, FollowerStatus } from '../eventlog/follower.js';

/**
 * decisions.md §15: the Prometheus families one process serves on GET /metrics. Every label value
 * comes from a fixed set (route patterns, outcomes, follower names, file names, stream
 * categories), never from the data: a series per id or e-mail would be a leak and would grow
 * without bound. The layers that count do it through the small hooks below, handed to them by
 * the composition root (runtime/wiring.ts), so none of them imports prom-client.
 */

/** From a tenth of a millisecond (a read served from memory) to ten seconds (a slow settle). */
const REQUEST_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A webhook attempt: a local receiver answers in a millisecond, the time-out is 10 s by default. */
const DELIVERY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const FOLLOWER_STATES: FollowerState[] = ['catching_up', 'caught_up', 'reconnecting', 'failed'];

const CATEGORY_LABELS = new Set<string>(CATEGORIES);

/** A stream's category: the text before its first `-` (a claim stream's key may hold more). */
export function categoryLabel(stream: string): string {
  const dash = stream.indexOf('-');
  const c = dash < 0 ? stream : stream.slice(0, dash);
  return CATEGORY_LABELS.has(c) ? c : 'other';
}

/** The methods Node's parser lets through are few, but a label set is kept to the ones we route. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const methodLabel = (method: string) => (METHODS.has(method) ? method : 'other');

/**
 * The embedded data dir's files whose size is served: every SQLite file in it and its write-ahead
 * log (the log, the read models, the webhooks', idempotency and erasures' files, the data keys'
 * where the log is EventStoreDB's, read models a `rebuild --prepare` left for the next release),
 * a few names at most, none per record.
 */
const STORAGE_FILE = /\.sqlite(-wal)?$/;

const DELIVERY_OUTCOMES = ['succeeded', 'failed', 'abandoned'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export interface MetricsSources {
  followers: () => Promise<FollowerStatus[]>;
  /** Tasks waiting in this process's delivery queue; null while it has none open. */
  queueDepth: () => Promise<number | null>;
  /** The embedded data dir; null for none (in memory, or the production stores). */
  dataDir: string | null;
}

/**
 * The runtime's own collectors (CPU, memory, event-loop lag, GC) watch the process, not a runtime:
 * one set per process, however many runtimes a test opens.
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 10 });
    // Gauges named like counters, which `promtool check metrics` rejects; the same counts stay
    // served by type as nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) processRegistry.removeSingleMetric(name);
  }
  return processRegistry;
}

export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({ name: 'turnout_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status.', labelNames: ['method', 'route', 'status'] as const, registers: [this.registry] });
  private readonly requestSeconds = new Histogram({ name: 'turnout_http_request_duration_seconds', help: 'Time to answer an HTTP request, by method and route pattern.', labelNames: ['method', 'route'] as const, buckets: REQUEST_BUCKETS, registers: [this.registry] });
  private readonly appended = new Counter({ name: 'turnout_events_appended_total', help: 'Events appended to the log by this process, by stream category.', labelNames: ['category'] as const, registers: [this.registry] });
  private readonly appendSeconds = new Histogram({ name: 'turnout_append_duration_seconds', help: 'Time of one append to the log (one write, one or more events).', buckets: REQUEST_BUCKETS, registers: [this.registry] });
  private readonly deliveries = new Counter({ name: 'turnout_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome: succeeded, failed (to be retried) or abandoned.', labelNames: ['outcome'] as const, registers: [this.registry] });
  private readonly deliverySeconds = new Histogram({ name: 'turnout_webhook_delivery_duration_seconds', help: 'Time of one webhook attempt, from sending to the answer (or the time-out).', buckets: DELIVERY_BUCKETS, registers: [this.registry] });
  private readonly rateLimited = new Counter({ name: 'turnout_rate_limited_total', help: 'Requests refused with 429 rate_limited.', registers: [this.registry] });

  constructor(sources: MetricsSources) {
    // Each outcome served from 0: Prometheus's increase() cannot count the sample that creates a
    // series, so an abandonment counter born at 1 would never fire the alert on it.
    for (const outcome of DELIVERY_OUTCOMES) this.deliveries.inc({ outcome }, 0);
    const registers = [this.registry];
    // Both follower families are collected in the same pass of a scrape: they share one reading
    // of the followers (each may count the log behind it) rather than each asking for its own.
    let reading: Promise<FollowerStatus[]> | null = null;
    const followers = () =>
      (reading ??= sources
        .followers()
        .catch(() => [])
        .finally(() => (reading = null)));
    // Scraped, not pushed: each value is read from what /readyz, the queue and the files say now.
    new Gauge({
      name: 'turnout_follower_behind_events',
      help: 'Events in the log after a follower position (where the log can count them).',
      labelNames: ['follower'] as const,
      registers,
      async collect() {
        this.reset();
        for (const f of await followers()) if (f.behind !== null) this.set({ follower: f.name }, f.behind);
      },
    });
    new Gauge({
      name: 'turnout_follower_state',
      help: 'A follower state: 1 for the state it is in, 0 for the others.',
      labelNames: ['follower', 'state'] as const,
      registers,
      async collect() {
        this.reset();
        for (const f of await followers()) for (const s of FOLLOWER_STATES) this.set({ follower: f.name, state: s }, f.state === s ? 1 : 0);
      },
    });
    new Gauge({
      name: 'turnout_webhook_queue_depth',
      help: 'Webhook delivery tasks waiting in the queue (due or scheduled for a retry).',
      registers,
      async collect() {
        this.reset();
        const depth = await sources.queueDepth().catch(() => null);
        if (depth !== null) this.set(depth);
      },
    });
    const dir = sources.dataDir;
    new Gauge({
      name: 'turnout_storage_bytes',
      help: 'Size of the embedded data files, by file name.',
      labelNames: ['file'] as const,
      registers,
      collect() {
        this.reset();
        if (!dir) return;
        let files: string[];
        try {
          files = readdirSync(dir).filter((f) => STORAGE_FILE.test(f));
        } catch {
          return;
        }
        for (const file of files) {
          try {
            this.set({ file }, statSync(path.join(dir, file)).size);
          } catch {
            // Gone since the listing (a WAL checkpointed away, a prepared file adopted): no series.
          }
        }
      },
    });
  }

  /** api/: one answered request (`route` is the route pattern, or `unmatched`). */
  request(method: string, route: string, status: number, seconds: number): void {
    const m = methodLabel(method);
    this.requests.inc({ method: m, route, status: String(status) });
    this.requestSeconds.observe({ method: m, route }, seconds);
  }

  appendedTo(stream: string, events: number, seconds: number): void {
    this.appended.inc({ category: categoryLabel(stream) }, events);
    this.appendSeconds.observe(seconds);
  }

  delivered(outcome: DeliveryOutcome, seconds: number | null): void {
    this.deliveries.inc({ outcome });
    if (seconds !== null) this.deliverySeconds.observe(seconds);
  }

  limited(): void {
    this.rateLimited.inc();
  }

  readonly contentType = this.registry.contentType;

  /** The exposition: the process's runtime families, then Turnout's. */
  async text(): Promise<string> {
    return (await processMetrics().metrics()) + (await this.registry.metrics());
  }
}

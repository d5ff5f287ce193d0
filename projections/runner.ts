import { type Category, fromLog, type LoggedEvent } from '../domain/events.js';
import { comparePositions, type Position, type RecordedEvent } from '../domain/shared/events.js';
import { type EventLog, type Subscription } from '../eventlog/port.js';
import type { CollectionDef, ReadStore } from './store/port.js';

export interface Projector<C extends Category = Category> {
  name: string;
  collections: CollectionDef[];
  /**
   * The stream categories (`constituent` of `constituent-12`) whose events this projector reads.
   * Left out, it is given every event. The runner skips the others without calling `apply`.
   */
  categories?: readonly C[];
  /** Applies one event of its categories. Must be idempotent: a redelivered event changes nothing. */
  apply(event: LoggedEvent<C>, store: ReadStore): Promise<void>;
}

export interface ProjectionRunnerOptions {
  checkpointName?: string;
  /** How long a write waits for its events to become visible before giving up. */
  waitTimeoutMs?: number;
  onError?: (error: unknown, event: RecordedEvent) => void;
}

/**
 * Follows the log from the stored checkpoint and feeds every event to every projector, in log
 * order. Writers await `waitFor(position)` so that a write answers only once its events are
 * visible to reads (read-your-writes).
 */
export class ProjectionRunner {
  private processed: Position | null = null;
  private startHead: Position | null = null;
  private subscription: Subscription | null = null;
  private waiters: Array<{ position: Position; resolve: () => void }> = [];
  private readonly checkpointName: string;
  private readonly waitTimeoutMs: number;
  failures = 0;

  constructor(
    private readonly log: EventLog,
    private readonly store: ReadStore,
    private readonly projectors: Projector[],
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.checkpointName = options.checkpointName ?? 'read-models';
    this.waitTimeoutMs = options.waitTimeoutMs ?? 15_000;
  }

  async start(): Promise<void> {
    for (const p of this.projectors) for (const c of p.collections) await this.store.defineCollection(c);
    this.processed = await this.store.getCheckpoint(this.checkpointName);
    this.startHead = await this.log.head();
    this.subscription = this.log.subscribe(this.processed, (e) => this.handle(e), {
      onCheckpoint: (p) => this.advance(p),
    });
  }

  /** The projectors that read each stream category, in the order given. */
  private readonly routes = new Map<string, Projector[]>();

  private route(stream: string): Projector[] {
    const dash = stream.indexOf('-');
    const category = dash < 0 ? stream : stream.slice(0, dash);
    let ps = this.routes.get(category);
    if (!ps) this.routes.set(category, (ps = this.projectors.filter((p) => !p.categories || (p.categories as readonly string[]).includes(category))));
    return ps;
  }

  private async handle(recorded: RecordedEvent): Promise<void> {
    const event = fromLog(recorded);
    for (const p of this.route(event.stream)) {
      try {
        await p.apply(event, this.store);
      } catch (err) {
        // A projector bug must not stall every other read model nor every write waiting on them.
        this.failures++;
        this.options.onError?.(err, event);
      }
    }
    await this.advance(event.position);
  }

  private async advance(position: Position): Promise<void> {
    if (this.processed && comparePositions(position, this.processed) <= 0) return;
    this.processed = position;
    await this.store.setCheckpoint(this.checkpointName, position);
    if (this.waiters.length) {
      const still: typeof this.waiters = [];
      for (const w of this.waiters) (comparePositions(w.position, position) <= 0 ? w.resolve() : still.push(w));
      this.waiters = still;
    }
  }

  /** Resolves once every event up to `position` is applied. */
  waitFor(position: Position): Promise<void> {
    if (this.processed && comparePositions(position, this.processed) <= 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`read models did not reach position ${position.commit} within ${this.waitTimeoutMs} ms`));
      }, this.waitTimeoutMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push({ position, resolve: done });
    });
  }

  /** True once the read models hold everything that was in the log when they started. */
  caughtUp(): boolean {
    if (!this.subscription) return false;
    if (!this.startHead) return true;
    return this.processed !== null && comparePositions(this.processed, this.startHead) >= 0;
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    this.subscription = null;
  }
}

/**
 * SIGTERM and SIGINT, handled from before the port opens to the end: a signal that
 * arrives while the process starts (modules loading, stores opening, read models catching up)
 * used to end it by the signal, with files open. Each phase registers how to close what it
 * opened; a step that cannot be cut short (opening the stores, building the app) is awaited first,
 * so nothing opens behind the close. Then everything closes in reverse order and the process
 * exits 0.
 */
export class Shutdown {
  private readonly closers: Array<() => Promise<void> | void> = [];
  private busy: Promise<unknown> = Promise.resolve();
  private requested = false;

  /** Installs the handlers; `graceMs` bounds the whole stop (an orchestrator kills at 10 s). */
  constructor(private readonly graceMs = 9_000) {
    process.on('SIGTERM', () => void this.stop('SIGTERM'));
    process.on('SIGINT', () => void this.stop('SIGINT'));
  }

  /** True once a signal arrived: a start still under way goes no further. */
  get stopping(): boolean {
    return this.requested;
  }

  /** Closes what a phase opened, when the process stops (last registered, first closed). */
  onStop(fn: () => Promise<void> | void): void {
    this.closers.push(fn);
  }

  /** A step the stop waits for before it closes anything. */
  async during<T>(step: Promise<T>): Promise<T> {
    this.busy = Promise.all([this.busy, step.catch(() => undefined)]);
    return step;
  }

  async stop(signal: string): Promise<void> {
    if (this.requested) return;
    this.requested = true;
    console.log(`${signal}: shutting down`);
    const guard = setTimeout(() => {
      console.error(`shutdown did not finish within ${this.graceMs / 1000} s; exiting`);
      process.exit(1);
    }, this.graceMs);
    guard.unref();
    try {
      await this.busy;
      for (const close of this.closers.reverse()) await close();
    } catch (err) {
      console.error('shutdown failed', err);
    }
    process.exit(0);
  }
}

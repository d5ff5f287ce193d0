/**
 * A pause between retries that a stop can cut short: followers back off after a failure, and
 * stopping one must not wait out its backoff.
 */
export class Pause {
  private cut: (() => void) | null = null;

  /** Resolves after `ms`, or at once on wake(). */
  for(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.cut = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.cut = done;
    });
  }

  /** Ends the pause under way, if any. */
  wake(): void {
    this.cut?.();
  }
}

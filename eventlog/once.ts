/**
 * A start-up step (creating indexes, defining collections) run at its first use and shared by
 * the callers meanwhile. A failure is not kept: the next caller tries again, so one transient
 * error of the store does not fail every later request until a restart. Nothing runs
 * before the first call, so no promise is ever left without a caller to handle its failure.
 */
export function onceUntilFailed<T>(step: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () =>
    (running ??= step().catch((err: unknown) => {
      running = null;
      throw err;
    }));
}

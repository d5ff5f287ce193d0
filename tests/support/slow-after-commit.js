// @ts-check
/*
 * After-commit work for the log's writer thread in tests (eventlog/sqlite-wire.js AfterCommit):
 * it keeps the thread busy `options.ms` after each commit, as the inline projection does while it
 * writes the read models, and applies nothing. Plain JavaScript: the thread imports it as it is.
 */

/** @param {{ ms: number }} options */
export async function open(options) {
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  return {
    /** @returns {Promise<bigint | null>} */
    afterCommit: async () => {
      Atomics.wait(sleeper, 0, 0, options.ms);
      return null;
    },
    close() {},
  };
}

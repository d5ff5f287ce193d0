/** Exit codes scripts can trust (decisions.md §13). */
export const EXIT = { done: 0, failed: 1, usage: 2, interrupted: 130 } as const;

/** The command was called wrongly (an option, an argument, the environment): exit 2. */
export class UsageError extends Error {
  readonly exitCode = EXIT.usage;
}

/** The command was called rightly and did not succeed: exit 1, with this message on stderr. */
export class CommandFailed extends Error {
  readonly exitCode = EXIT.failed;
}

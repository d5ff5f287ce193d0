import { type ChildProcess, spawn } from 'node:child_process';

export interface CliRun {
  child: ChildProcess;
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Its exit code once it has ended (a signal's death counts as 128 + the signal). */
  exited: Promise<number>;
}

/**
 * Runs the built `turnout` (cli/main.js) as a child process, as `npx turnout` would, with only
 * the environment given (no TURNOUT_URL unless passed). stdin is closed and stdout/stderr are
 * pipes, not a terminal, so progress comes as plain lines.
 */
export function startCli(main: string, args: string[], env: Record<string, string | undefined> = {}): CliRun {
  const child = spawn(process.execPath, [main, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number>((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal === 'SIGINT' ? 130 : 128))));
  return { child, stdout: () => out, stderr: () => err, exited };
}

export async function runCli(main: string, args: string[], env: Record<string, string | undefined> = {}) {
  const run = startCli(main, args, env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * decisions.md §13: progress at least every 5 s, also while a prepare's last step holds the main
 * thread in single SQLite statements. The heartbeat's lines come from a thread of their own: a
 * process that blocks its main thread for 1.6 s still prints them, at their interval.
 */
describe('the CLI heartbeat', () => {
  it('prints while the main thread is blocked, and stops when told', () => {
    const build = process.env.TURNOUT_TEST_BUILD;
    if (!build) throw new Error('run through npm test (TURNOUT_TEST_BUILD names the compiled test build)');
    const module = path.resolve(build, 'cli/heartbeat.js');
    const script = `
      const { heartbeat } = await import(${JSON.stringify(module)});
      const stop = heartbeat('still building', 300);
      const until = Date.now() + 1600;
      while (Date.now() < until) {} // one long synchronous step
      stop();
      setTimeout(() => process.stdout.write('done'), 700); // no line after the stop
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('done');
    const lines = r.stderr.trim().split('\n');
    // 1.6 s at 300 ms: some lines are given up to the worker's start on a busy machine, never all.
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.length).toBeLessThanOrEqual(6);
    for (const line of lines) expect(line).toMatch(/^still building \(\d+ s\)$/);
  });
});

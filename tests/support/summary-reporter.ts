import type { Reporter } from 'vitest/reporters';

type Task = { type: string; mode?: string; result?: { state?: string }; tasks?: Task[] };

/** Ends the run with the plain `N passed, N failed, N skipped` line that CI reads. */
export default class SummaryReporter implements Reporter {
  onFinished(files: Task[] = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const walk = (t: Task) => {
      if (t.tasks) t.tasks.forEach(walk);
      if (t.type !== 'test') return;
      if (t.result?.state === 'pass') passed++;
      else if (t.result?.state === 'fail') failed++;
      else skipped++;
    };
    files.forEach(walk);
    // A file that failed to load has no tests to count: count it as a failure.
    failed += files.filter((f) => f.result?.state === 'fail' && !f.tasks?.length).length;
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

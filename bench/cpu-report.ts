import { writeSync } from 'node:fs';

/**
 * Preloaded into a child the bench runs (`node --import`): at exit it writes the child's own CPU
 * (user and system µs) as one JSON line to fd 3, so the bench can put the CLI's CPU a row beside
 * the server's without the CLI knowing it is measured; with it the child's User Timing marks
 * (the import's phases, cli/import.ts) and their origin on the wall clock, for the timeline.
 */
process.on('exit', () => {
  try {
    const marks = performance.getEntriesByType('mark').map((m) => [m.name, m.startTime]);
    writeSync(3, `${JSON.stringify({ ...process.cpuUsage(), timeOrigin: performance.timeOrigin, marks })}\n`);
  } catch {
    // No fd 3: run outside the bench.
  }
});

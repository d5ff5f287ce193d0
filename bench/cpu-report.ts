import { writeSync } from 'node:fs';

/**
 * Preloaded into a child the bench runs (`node --import`): at exit it writes the child's own CPU
 * (user and system µs) as one JSON line to fd 3, so the bench can put the CLI's CPU a row beside
 * the server's without the CLI knowing it is measured.
 */
process.on('exit', () => {
  try {
    writeSync(3, `${JSON.stringify(process.cpuUsage())}\n`);
  } catch {
    // No fd 3: run outside the bench.
  }
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Every webhook payload a test produces is checked against its type's published schema.
    setupFiles: ['tests/support/payload-check.setup.ts'],
    reporters: ['default', './tests/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Real races and real servers (nats-server, child processes) need whole cores; two is what CI has.
    pool: 'forks',
    // Each fork runs file after file in one module registry (isolate: false): a file's imports
    // (Fastify, the stores, the schemas) are loaded once a fork, not once a file. Measured on this
    // 2-core machine: `npm test` 9 min 1 s isolated (collect and setup 161 s of the forks' time),
    // 4 min 55 s so. Tests put back what they change of the process (env variables in afterEach
    // or finally, fake timers restored), and each builds its own servers, stores and data dirs.
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
  },
});

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
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});

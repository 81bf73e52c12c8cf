import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Each file gets its own database, cloned from a migrated template, so files run in parallel safely.
    fileParallelism: true,
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
})

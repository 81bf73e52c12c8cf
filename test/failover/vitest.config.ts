// `npm run test:failover`: the database failover tests, apart from `npm test` because they start a formation of
// their own (a monitor and two PostgreSQL nodes, Debian's postgresql-15-auto-failover) and take minutes.
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['test/failover/**/*.test.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
})

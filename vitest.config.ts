import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // npm run test:failover (test/failover/vitest.config.ts)
    // npm run check:template runs test/template/withdrawals, inside a copy where its steps are applied.
    exclude: ['test/failover/**', 'test/template/withdrawals/**', 'node_modules/**'],
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    // Each file gets its own database, cloned from a migrated template, so files run in parallel safely.
    fileParallelism: true,
    // A worker keeps the modules it imported from one file to the next: each file imported the app afresh, 220 s of
    // the suite's CPU (of a 396 s run, the two cores busy throughout) against 37 s kept (a 315 s run). The files share
    // no state through modules: each builds its own app, database and processor, and reads metrics as differences.
    isolate: false,
    // Most files wait on the database, servers and processes, not the CPU: on a 2-core machine Vitest's default (one
    // worker per core but one) ran them one at a time, 654 s; four at once took 346 s.
    maxWorkers: Math.max(4, availableParallelism() - 1),
    // Generous: a test waits on events, and these bounds only decide how long a failing one takes on a loaded machine
    // (four files at once on two cores: a test of processes that took 33 s alone took over 60 s there).
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})

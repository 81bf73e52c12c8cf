// Prints one plain closing line, "tests: N passed, N failed, N skipped", that any CI log reader understands.
import type { Reporter, TestModule } from 'vitest/node'

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    const count = { passed: 0, failed: 0, skipped: 0, pending: 0 }
    for (const module of testModules) for (const test of module.children.allTests()) count[test.result().state]++
    console.log(`tests: ${count.passed} passed, ${count.failed} failed, ${count.skipped + count.pending} skipped`)
  }
}

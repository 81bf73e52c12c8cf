// The processor contract's cases for an operation that is not the service's own: one file per operation in this
// folder, exporting `contractCases`, which declares its `it(...)` cases against the processor under test. The
// contract suite (test/processor/contract.test.ts) runs them on every processor, and its last case names an
// operation of the boundary no case called.
import type { ProcessorUnderTest } from '../../helpers/processors.js'

export type ContractCases = (under: () => ProcessorUnderTest) => void

// What the contract tests (test/contract-requests.test.ts) need of a resource that a generated request cannot make
// by itself. One file per resource in this folder, each exporting `fixture`; a fork's resource adds its own file
// (withdrawals.ts), and the tests name what is missing.
import type { Sql } from '../../src/db/connect.js'
import type { TestAccount } from '../helpers/app.js'

export interface ContractFixture {
  /** Makes a resource whose id a path parameter of this kind takes (ChargeId, WebhookEndpointId, …). */
  ids?: Record<string, (user: TestAccount, operationId: string, sql: Sql) => Promise<string>>
  /** A valid body for an operation whose openapi example cannot be sent here (it names a host: tests resolve none). */
  bodies?: Record<string, Record<string, unknown>>
  /**
   * What must exist before an operation's valid body can succeed, by operationId: a withdrawal needs a funded balance,
   * a capture an authorization. Run once per test, for the account the test uses.
   */
  prepare?: Record<string, (user: TestAccount, sql: Sql) => Promise<void>>
}

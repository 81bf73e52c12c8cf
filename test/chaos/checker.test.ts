// The fault run's checker can fail: a history of what the service really did passes, and each way a history or
// the books can break a promise is named by its property. The service runs in process on a test database; the
// history is built from its real answers, then altered one way at a time.
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { acceptEvent } from '../../src/processor-events/inbox.js'
import { setupTestApp, type TestAccount, type TestContext } from '../helpers/app.js'
import { LATER_SETTINGS } from '../helpers/at-processor.js'
import { check, type Violations } from './checker.js'
import type { Attempt, Operation, OperationKind } from './clients.js'

let context: TestContext
beforeAll(async () => {
  context = await setupTestApp()
})
afterAll(() => context.close())

/** One operation as a client recorded it: one attempt, and its answer. */
async function perform(account: TestAccount, kind: OperationKind, path: string, body: object): Promise<Operation> {
  const key = randomUUID()
  const sentAt = Date.now()
  const response = await account.post(path, body, { key })
  const attempt: Attempt = {
    method: 'POST',
    path,
    key,
    body: JSON.stringify(body),
    sentAt,
    answeredAt: Date.now(),
    status: response.statusCode,
    text: response.body,
    retryAfter: null,
    replayed: false,
  }
  return {
    id: 0,
    stack: 'simulated',
    client: 0,
    kind,
    key,
    startedAt: sentAt,
    endedAt: Date.now(),
    end: 'final',
    status: response.statusCode,
    text: response.body,
    attempts: [attempt],
  }
}

/** A charge refunded in part, an authorization captured, one voided, and a decline: what the service did. */
async function history(): Promise<{ account: TestAccount; operations: Operation[]; delivered: Set<string> }> {
  const account = await context.newAccount()
  const charge = await perform(account, 'charge', '/v1/charges', {
    amount_cents: 5000,
    currency: 'usd',
    source: 'pm_card_visa',
  })
  const chargeId = JSON.parse(charge.text!).id as string
  const refund = await perform(account, 'refund', `/v1/charges/${chargeId}/refunds`, { amount_cents: 1200 })
  const authorized = await perform(account, 'authorize', '/v1/charges', {
    amount_cents: 3000,
    currency: 'usd',
    source: 'pm_card_visa',
    capture: false,
  })
  const capture = await perform(account, 'capture', `/v1/charges/${JSON.parse(authorized.text!).id}/capture`, {
    amount_cents: 2000,
  })
  const held = await perform(account, 'authorize', '/v1/charges', {
    amount_cents: 700,
    currency: 'usd',
    source: 'pm_card_visa',
    capture: false,
  })
  const voided = await perform(account, 'void', `/v1/charges/${JSON.parse(held.text!).id}/void`, {})
  const declined = await perform(account, 'charge', '/v1/charges', {
    amount_cents: 900,
    currency: 'usd',
    source: 'pm_card_chargeDeclined',
  })
  const events = await context.sql<{ id: string }[]>`select id from events where account_id = ${account.id}`
  return {
    account,
    operations: [charge, refund, authorized, capture, held, voided, declined],
    delivered: new Set(events.map((event) => event.id)),
  }
}

async function judge(account: TestAccount, operations: Operation[], delivered: Set<string>): Promise<Violations> {
  const violations: Violations = new Map()
  await check(
    { stack: 'simulated', sql: context.sql, accountId: account.id, operations, stripe: undefined, delivered },
    violations,
  )
  return violations
}

describe('the checker of the fault run', () => {
  it('when the history is what the service did, then no property is violated', async () => {
    const { account, operations, delivered } = await history()
    expect([201, 201, 201, 200, 201, 200, 402]).toEqual(operations.map((operation) => operation.status))
    expect(Object.fromEntries(await judge(account, operations, delivered))).toEqual({})
  })

  it('when a replay differs by a byte, an answer was a 500 or a 422, then each is named', async () => {
    const { account, operations, delivered } = await history()
    const [charge, refund, authorized] = operations as [Operation, Operation, Operation]
    charge.attempts.push({ ...charge.attempts[0]!, text: charge.text!.replace('{', '{ '), replayed: true })
    refund.attempts.unshift({ ...refund.attempts[0]!, status: 500, text: '{}' })
    authorized.attempts.unshift({
      ...authorized.attempts[0]!,
      status: 422,
      text: '{"type":"https://payments.example/problems/idempotency-key-reused"}',
    })
    expect([...(await judge(account, operations, delivered)).keys()].sort()).toEqual(
      [
        'no 5xx but 503 with Retry-After',
        'no same-body retry refused',
        'replays equal the first answer, byte for byte',
      ].sort(),
    )
  })

  it('when an answer is not in the books or not its key’s, or an event never arrived, then each is named', async () => {
    const { account, operations, delivered } = await history()
    const [charge] = operations as [Operation]
    const missing = JSON.parse(charge.text!)
    missing.id = 'ch_000000000000000000000000'
    operations.push({ ...charge, key: randomUUID(), text: JSON.stringify(missing) })
    delivered.delete([...delivered][0]!)
    const violations = await judge(account, operations, delivered)
    expect([...violations.keys()].sort()).toEqual(
      [
        'every acknowledged outcome is in the books',
        'every answer is the stored response of its key',
        'every event reached its webhook endpoint',
      ].sort(),
    )
  })

  it('when money moved under a key no key of the books names, or the books disagree with the processor, then each is named', async () => {
    const { account, operations, delivered } = await history()
    const chargeId = JSON.parse(operations[0]!.text!).id as string
    await context.sql`update charges set amount_refunded_cents = 0 where id = ${chargeId}`
    const stray = randomUUID()
    await context.sql`
      insert into simulated_processor.operations (idempotency_key, kind, parameters, outcome)
      select ${stray}, kind, parameters, jsonb_set(outcome, '{processorReference}',
        to_jsonb(${`sim_ch_${randomUUID()}`}::text))
      from simulated_processor.operations where kind = 'charge' and outcome->>'status' = 'succeeded' limit 1`
    // A stray movement is every account's concern: it goes once judged.
    const violations = await judge(account, operations, delivered).finally(
      () => context.sql`delete from simulated_processor.operations where idempotency_key = ${stray}`,
    )
    // The refund is in the ledger still: the ledger and the books disagree too.
    expect([...violations.keys()].sort()).toEqual(
      ['at most one money movement per key', 'the books equal the processor', 'the ledger equals the books'].sort(),
    )
    expect(violations.get('the books equal the processor')!.join('\n')).toMatch(
      new RegExp(
        `charge ${chargeId}: books captured 5000 refunded 0, processor 5000 and 1200[\\s\\S]*has no charge in the ` +
          `books`,
      ),
    )
  })

  it('when a movement of money the books hold is not in the ledger, then it is named', async () => {
    const { account, operations, delivered } = await history()
    const refundId = JSON.parse(operations[1]!.text!).id as string
    // The ledger refuses to lose a posting (append-only): the refund is told as another's.
    await context.sql.begin(async (tx) => {
      await tx`alter table ledger_transactions disable trigger ledger_transactions_append_only`
      await tx`update ledger_transactions set source = 're_elsewhere' where account_id = ${account.id}
        and source = ${refundId}`
      await tx`alter table ledger_transactions enable trigger ledger_transactions_append_only`
    })
    const violations = await judge(account, operations, delivered)
    expect([...violations.keys()]).toEqual(['the ledger equals the books'])
    expect(violations.get('the ledger equals the books')!.join('\n')).toMatch(
      /books captured 5000 refunded 1200, ledger 5000 and 0/,
    )
  })

  it('when a key is still in flight, then it is named', async () => {
    const { account, operations, delivered } = await history()
    await context.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until,
        expires_at)
      values (${account.id}, 'POST /v1/charges', 'left-in-flight', ${Buffer.alloc(32)}, ${randomUUID()},
        ${randomUUID()}, now(), now() + interval '1 day')`
    expect([...(await judge(account, operations, delivered)).keys()]).toEqual([
      'every key whose operation may have gone out is settled',
    ])
  })
})

// Last: a payout carries the processor's money of every account in the database, as the fault run's does.
describe('the checker’s payouts', () => {
  const control = async (path: string, body: object = {}) => {
    const response = await context.app.inject({ method: 'POST', url: `/simulated-processor${path}`, payload: body })
    expect(response.statusCode, response.body).toBe(200)
    return response.json() as { changes: { reference: string }[] }
  }

  it('when everything is paid out and reconciles, then no property is violated', async () => {
    const { account, operations, delivered } = await history()
    const availableBy = new Date(Date.now() + 30 * 86_400_000).toISOString()
    const { changes } = await control('/payouts', { available_by: availableBy })
    await control(`/payouts/${changes[0]!.reference}/paid`)
    // Its events (payout.created, payout.paid) delivered too, as history() takes its own to be.
    for (const event of await context.sql<{ id: string }[]>`
      select id from events where account_id = ${account.id} and type like 'payout.%'`)
      delivered.add(event.id)
    expect([...(await judge(account, operations, delivered)).keys()]).toEqual([])
  })

  it('when a payout does not add up, or money is left in a balance, then each is named', async () => {
    const { account, operations, delivered } = await history()
    const changes = [{ object: 'payout', reference: 'po_short', status: 'paid', amountCents: 100, currency: 'usd' }]
    await acceptEvent(
      context.sql,
      { id: 'evt_po_short', type: 'payout.paid', createdAt: new Date(), changes: changes as never },
      'webhook',
      LATER_SETTINGS,
    )
    const violations = await judge(account, operations, delivered)
    expect([...violations.keys()]).toEqual(['every payout reconciles to the cent'])
    expect(violations.get('every payout reconciles to the cent')!.join('\n')).toMatch(
      /payout po_short: the processor has not told what it carries yet[\s\S]*the account's balance is \d+ after/,
    )
  })
})

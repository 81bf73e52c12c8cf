// The comparison and the events read by one table (src/processor-events/charge-moves.ts): every way into every final
// state ends in agreement. Where the processor moves a payment and its news is lost (authentication failed,
// canceled in its dashboard, lapsed there), the comparison run before the news is read opens a discrepancy, and
// the one after the reconciliation applied the news resolves it. Where the service itself ends a charge
// (declined, voided, expired by its own job), a discrepancy left open from before resolves at the next run.
import { beforeAll, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { chargeBody, useTestApp } from '../helpers/app.js'
import { laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'
import { expireAuthorizations } from '../../src/charges/expire-authorizations.js'

const RETURN_URL = 'https://shop.example/orders/1042/paid'
const MANDATE = { ip_address: '203.0.113.7', user_agent: 'Mozilla/5.0 (test)' }

describe.each(PROCESSORS)('the comparison with the $name processor', ({ name }) => {
  const processor = useProcessor(name)
  const suite = useTestApp({ processor: processor.factory })
  let later: LaterAtProcessor
  beforeAll(async () => {
    later = await laterAt(name, suite.context, processor)
  })

  const charge = async (overrides: Record<string, unknown>) => {
    const response = await suite.account.post('/v1/charges', chargeBody(overrides))
    expect([201, 402], response.body).toContain(response.statusCode)
    return response.json().charge
      ? (await suite.account.get(`/v1/charges/${response.json().charge}`)).json()
      : response.json()
  }
  const status = async (id: string) => (await suite.account.get(`/v1/charges/${id}`)).json()
  const open = async (id: string) =>
    (
      await suite.context.sql<{ kind: string }[]>`
      select kind from reconciliation_discrepancies where resolved_at is null and reference = ${id}`
    ).map((row) => row.kind)

  const PROCESSOR_MOVES = [
    {
      way: 'the customer fails the authentication',
      body: { source: 'pm_card_authenticationRequired', return_url: RETURN_URL },
      move: (reference: string) => later.untold.authenticate(reference, false),
      ends: { status: 'failed', failure_code: 'payment_intent_authentication_failure' },
    },
    {
      way: 'a payment awaiting authentication is canceled at the processor',
      body: { source: 'pm_card_authenticationRequired', return_url: RETURN_URL },
      move: (reference: string) => later.untold.cancel(reference),
      ends: { status: 'failed', failure_code: 'canceled' },
    },
    {
      way: 'a bank debit is canceled at the processor before it settles',
      body: { source: 'pm_usBankAccount_success', mandate: MANDATE },
      move: (reference: string) => later.untold.cancel(reference),
      ends: { status: 'failed', failure_code: 'canceled' },
    },
    {
      way: 'a bank debit fails',
      body: { source: 'pm_usBankAccount_insufficientFunds', mandate: MANDATE },
      move: (reference: string) => later.untold.settle(reference),
      ends: { status: 'failed', failure_code: 'insufficient_funds' },
    },
    {
      way: 'an authorization is voided in the processor’s dashboard',
      body: { capture: false },
      move: (reference: string) => later.untold.cancel(reference),
      ends: { status: 'voided' },
    },
    {
      way: 'an authorization lapses at the processor',
      body: { capture: false },
      move: (reference: string) => later.untold.expire(reference),
      ends: { status: 'expired' },
    },
  ]

  it.each(PROCESSOR_MOVES)(
    'when $way and the news is lost, then the comparison reports it until the reconciliation applies the news, and ' +
      'then resolves it',
    async ({ body, move, ends }) => {
      const made = await charge(body)
      await move(made.processor_reference)
      await later.compare()
      expect(await open(made.id)).toEqual(['payment_differs'])
      await later.reconcile()
      expect(await status(made.id)).toMatchObject(ends)
      const compared = await later.compare()
      expect(await open(made.id)).toEqual([])
      expect(compared.found).toBe(0)
    },
  )

  const SERVICE_ENDS = [
    { way: 'a card is declined', make: () => charge({ source: 'pm_card_chargeDeclined' }), ends: 'failed' },
    {
      way: 'an authorization is voided through the API',
      make: async () => {
        const held = await charge({ capture: false })
        expect((await suite.account.post(`/v1/charges/${held.id}/void`, {})).statusCode).toBe(200)
        return held
      },
      ends: 'voided',
    },
    {
      way: 'an authorization expires by the service’s own job',
      make: async () => {
        const held = await charge({ capture: false })
        // Its news first: the job skips a charge whose row an event being applied holds.
        await later.delivered()
        await suite.context.sql`update charges set authorization_expires_at = now() where id = ${held.id}`
        await expireAuthorizations(
          suite.context.sql,
          suite.context.processor,
          { batchSize: 10, leaseSeconds: 60 },
          pino({ level: 'silent' }),
        )
        return held
      },
      ends: 'expired',
    },
  ]

  it.each(SERVICE_ENDS)(
    'when $way, then a discrepancy left open from before resolves at the next comparison',
    async ({ make, ends }) => {
      const made = await make()
      expect((await status(made.id)).status).toBe(ends)
      await suite.context.sql`
      insert into reconciliation_discrepancies (kind, reference, account_id, detail, books, processor)
      values ('payment_differs', ${made.id}, ${suite.account.id}, 'seen while the processor lagged', 'null', 'null')`
      await later.delivered()
      const compared = await later.compare()
      expect(await open(made.id)).toEqual([])
      expect(compared.found).toBe(0)
    },
  )
})

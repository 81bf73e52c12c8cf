// The ledger's invariants (docs/ledger.md) over random sequences of what moves money: charges captured at once or
// authorized then captured in part, refunds in part, replays of any of them, disputes won or lost, refunds that fail
// later. After each sequence, for the account: every ledger transaction balances; the balance is the sum of the
// nets; and the ledger agrees with the books of charges and refunds, charge by charge: what was captured, less its
// fee, less what stays refunded, less what disputes took.
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import { LATER_SETTINGS, laterAt, type LaterAtProcessor } from '../helpers/at-processor.js'
import { chargeBody, type TestAccount, useTestApp } from '../helpers/app.js'
import { useProcessor } from '../helpers/processors.js'
import { feeTotal, paymentFee } from '../../src/processor/pricing.js'

const processor = useProcessor('simulated')
const suite = useTestApp({ processor: processor.factory })
let later: LaterAtProcessor
beforeAll(async () => {
  later = await laterAt('simulated', suite.context, processor)
})

type Step =
  | { kind: 'charge'; amount: number; source: string; capture: boolean }
  | { kind: 'capture'; pick: number; part: number }
  | { kind: 'refund'; pick: number; part: number }
  | { kind: 'replay'; pick: number }
  | { kind: 'close dispute'; pick: number; won: boolean }
  | { kind: 'news' }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('charge' as const),
      amount: fc.integer({ min: 50, max: 200_000 }),
      source: fc.constantFrom('pm_card_visa', 'pm_card_createDispute', 'pm_card_refundFail', 'pm_card_chargeDeclined'),
      capture: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('capture' as const),
      pick: fc.nat(),
      part: fc.double({ min: 0.01, max: 1 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      pick: fc.nat(),
      part: fc.double({ min: 0.01, max: 1 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replay' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('close dispute' as const), pick: fc.nat(), won: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'news' as const }) },
)

interface Sent {
  url: string
  body: object
  key: string
}

async function run(user: TestAccount, steps: Step[]): Promise<void> {
  const sent: Sent[] = []
  const charges: { id: string; amount: number; reference: string }[] = []
  const send = async (url: string, body: object) => {
    const request = { url, body, key: randomUUID() }
    sent.push(request)
    return user.post(url, body, { key: request.key })
  }
  const current = async (pick: number) => {
    const chosen = charges[pick % Math.max(charges.length, 1)]
    return chosen && (await user.get(`/v1/charges/${chosen.id}`)).json()
  }
  for (const next of steps) {
    if (next.kind === 'charge') {
      const response = await send(
        '/v1/charges',
        chargeBody({ amount_cents: next.amount, source: next.source, capture: next.capture }),
      )
      const charge = response.json()
      if (response.statusCode === 201)
        charges.push({ id: charge.id, amount: next.amount, reference: charge.processor_reference })
    } else if (next.kind === 'capture') {
      const charge = await current(next.pick)
      if (charge?.status === 'requires_capture')
        await send(`/v1/charges/${charge.id}/capture`, {
          amount_cents: Math.max(1, Math.floor(charge.amount_cents * next.part)),
        })
    } else if (next.kind === 'refund') {
      const charge = await current(next.pick)
      const left = charge ? charge.amount_captured_cents - charge.amount_refunded_cents : 0
      if (left > 0)
        await send(`/v1/charges/${charge.id}/refunds`, { amount_cents: Math.max(1, Math.floor(left * next.part)) })
    } else if (next.kind === 'replay') {
      const again = sent[next.pick % Math.max(sent.length, 1)]
      if (again) await user.post(again.url, again.body, { key: again.key })
    } else if (next.kind === 'close dispute') {
      const charge = await current(next.pick)
      if (charge?.dispute && charge.dispute.status === 'needs_response')
        await later.closeDispute(charge.processor_reference, next.won ? 'won' : 'lost')
    } else {
      await later.delivered()
    }
  }
  await later.delivered()
}

/** What the books of charges and refunds say the balance moved by, charge by charge. */
async function expectedFromTheBooks(accountId: string): Promise<Map<string, number>> {
  const { sql } = suite.context
  const charges = await sql<
    { id: string; captured: number; refunded: number; dispute: { status: string; amount_cents: number } | null }[]
  >`
    select id, amount_captured_cents as captured, amount_refunded_cents as refunded, dispute
    from charges where account_id = ${accountId}`
  const { pricing } = LATER_SETTINGS
  return new Map(
    charges.map((charge) => {
      const fee = charge.captured ? feeTotal(paymentFee(pricing, charge.captured, 'usd')) : 0
      const disputed = charge.dispute
        ? pricing.disputeFeeCents + (charge.dispute.status === 'won' ? 0 : charge.dispute.amount_cents)
        : 0
      return [charge.id, charge.captured - fee - charge.refunded - disputed]
    }),
  )
}

/** What the ledger says, charge by charge: the nets of each charge's transactions, its refunds' and disputes'. */
async function postedPerCharge(accountId: string): Promise<Map<string, number>> {
  const { sql } = suite.context
  const distinct = await sql<{ charge_id: string; net: string }[]>`
    select c.id as charge_id, coalesce(sum(t.net_cents), 0) as net
    from charges c
    left join ledger_transactions t on t.account_id = c.account_id and (
      t.source = c.id or t.source = c.dispute->>'processor_reference'
      or t.source in (select r.id from refunds r where r.account_id = c.account_id and r.charge_id = c.id))
    where c.account_id = ${accountId}
    group by c.id`
  return new Map(distinct.map((row) => [row.charge_id, Number(row.net)]))
}

describe('the ledger over random sequences of money movements', () => {
  it('when any sequence has run, then every transaction balances, the balance is the sum of the nets, and each charge’s postings agree with the books', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), async (steps) => {
        const user = await suite.context.newAccount()
        await run(user, steps)
        const { sql } = suite.context
        const unbalanced = await sql`
          select t.id from ledger_transactions t join ledger_entries e on e.account_id = t.account_id
            and e.transaction_id = t.id
          where t.account_id = ${user.id}
          group by t.id, t.net_cents
          having sum(e.amount_cents) <> 0
            or sum(e.amount_cents) filter (where e.ledger_account = 'balance') <> t.net_cents`
        expect(unbalanced).toEqual([])
        const [nets] = await sql<{ total: string }[]>`
          select coalesce(sum(net_cents), 0) as total from ledger_transactions where account_id = ${user.id}`
        const balance = (await user.get('/v1/balance')).json()
        const held = [...balance.available, ...balance.pending].reduce((sum, each) => sum + each.amount_cents, 0)
        expect(held).toBe(Number(nets!.total))
        expect(await postedPerCharge(user.id)).toEqual(await expectedFromTheBooks(user.id))
      }),
      { numRuns: 40 },
    )
  }, 240_000)
})

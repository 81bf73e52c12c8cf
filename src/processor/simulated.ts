// A stand-in processor driven by test sources, as in Stripe's test mode, and faithful where retries are concerned:
// it keeps a durable ledger (simulated_processor.operations, in the service's own PostgreSQL) of every operation
// it performed under each idempotency key, so a key sent again gets the first outcome, even after a restart;
// the same key with other parameters is refused, as Stripe's idempotency_error; and lookup answers from it.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql } from '../db/connect.js'
import { canonicalJson } from '../idempotency/fingerprint.js'
import {
  type ChargeOutcome,
  type ChargeRequest,
  type OperationRecord,
  type PaymentProcessor,
  ProcessorIdempotencyError,
  ProcessorRequestError,
  ProcessorUnavailableError,
  type RefundOutcome,
} from './processor.js'

/**
 * Test sources, named as Stripe's test payment methods where Stripe has one (docs/charges.md has the same table):
 * - pm_card_visa, pm_card_mastercard: succeed
 * - pm_card_chargeDeclined (generic_decline), pm_card_chargeDeclinedInsufficientFunds or pm_card_insufficientFunds
 *   (insufficient_funds), pm_card_chargeDeclinedExpiredCard (expired_card): declined
 * - pm_card_slow: charged at once, answered after a delay (2 s by default), long enough for a client to time out
 * - pm_card_processorDown: fails as unavailable, every time, having done nothing
 * - pm_card_responseLost: charged, then the answer is lost (the service sees a timeout after the money moved)
 * - pm_card_timeoutBeforeCharge: times out before doing anything, the first time a charge of that amount and
 *   currency is attempted in this process; later attempts go through
 * - anything else: refused, as Stripe refuses a payment method it does not know (ProcessorRequestError, nothing done)
 * Authorizations (capture: false) behave as charges; captures, voids and refunds of a pm_card_slow,
 * pm_card_responseLost or pm_card_timeoutBeforeCharge charge behave the same way.
 */
export function createSimulatedProcessor(options: { sql: Sql; slowDelayMs?: number }): PaymentProcessor {
  const { sql } = options
  const slowDelayMs = options.slowDelayMs ?? 2000
  // What has timed out once already: the next attempt of the same thing goes through.
  const timedOutOnce = new Set<string>()
  const timeOutOnce = (what: string) => {
    if (timedOutOnce.has(what)) return
    timedOutOnce.add(what)
    throw new ProcessorUnavailableError('simulated timeout before anything was done')
  }

  async function chargeOrAuthorize(kind: 'charge' | 'authorization', { amountCents, currency, source, idempotencyKey }: ChargeRequest) {
    if (source === 'pm_card_processorDown') throw new ProcessorUnavailableError('simulated processor outage')
    if (!KNOWN_SOURCES.has(source)) throw new ProcessorRequestError('source', 'resource_missing', `No such PaymentMethod: '${source.slice(0, 60)}'`)
    if (source === 'pm_card_timeoutBeforeCharge') timeOutOnce(`${kind}:${amountCents}:${currency}`)
    const parameters = { amount_cents: amountCents, currency, source }
    const { outcome, performed } = await perform<ChargeOutcome>(sql, idempotencyKey, kind, parameters, () => chargeOutcome(source, idempotencyKey))
    if (performed && source === 'pm_card_slow') await sleep(slowDelayMs)
    if (performed && source === 'pm_card_responseLost') throw new ProcessorUnavailableError(`simulated timeout: ${kind} done, answer lost`)
    return outcome
  }

  /** Captures, voids and refunds behave as the charge they act on: slow, losing answers, timing out first. */
  async function settle<Outcome>(kind: 'capture' | 'void' | 'refund', chargeReference: string, idempotencyKey: string, parameters: Record<string, unknown>, outcome: () => Outcome) {
    const [charge] = await sql<{ source: string }[]>`
      select parameters->>'source' as source from simulated_processor.operations
      where kind in ('charge', 'authorization') and outcome->>'processorReference' = ${chargeReference}`
    if (charge?.source === 'pm_card_timeoutBeforeCharge') timeOutOnce(`${kind}:${chargeReference}:${JSON.stringify(parameters)}`)
    const done = await perform<Outcome>(sql, idempotencyKey, kind, { charge_reference: chargeReference, ...parameters }, outcome)
    if (done.performed && charge?.source === 'pm_card_slow') await sleep(slowDelayMs)
    if (done.performed && charge?.source === 'pm_card_responseLost') throw new ProcessorUnavailableError(`simulated timeout: ${kind} done, answer lost`)
    return done.outcome
  }

  return {
    charge: (request) => chargeOrAuthorize('charge', request),
    authorize: (request) => chargeOrAuthorize('authorization', request),
    capture: ({ chargeReference, amountCents, idempotencyKey }) =>
      settle('capture', chargeReference, idempotencyKey, { amount_cents: amountCents }, () => ({ processorReference: reference('sim_cp', idempotencyKey) })),
    void: ({ chargeReference, idempotencyKey }) => settle('void', chargeReference, idempotencyKey, {}, () => ({ processorReference: reference('sim_vd', idempotencyKey) })),
    refund: ({ chargeReference, amountCents, idempotencyKey }) =>
      settle('refund', chargeReference, idempotencyKey, { amount_cents: amountCents }, () => ({ processorReference: reference('sim_re', idempotencyKey) })),

    // Its ledger is read in the same database it was written to: it cannot lag.
    async lookup({ request: { idempotencyKey } }) {
      const [row] = await sql<{ kind: OperationRecord['kind']; outcome: OperationRecord['outcome'] }[]>`
        select kind, outcome from simulated_processor.operations where idempotency_key = ${idempotencyKey}`
      return row && ({ kind: row.kind, outcome: row.outcome } as OperationRecord)
    },
  }
}

/**
 * Performs an operation once per idempotency key: the first call records its outcome; later calls with the same
 * parameters get that outcome back (performed: false); with other parameters they are refused.
 */
async function perform<Outcome>(
  sql: Sql,
  idempotencyKey: string,
  kind: OperationRecord['kind'],
  parameters: Record<string, unknown>,
  decide: () => Outcome,
): Promise<{ outcome: Outcome; performed: boolean }> {
  const [inserted] = await sql<{ outcome: Outcome }[]>`
    insert into simulated_processor.operations (idempotency_key, kind, parameters, outcome)
    values (${idempotencyKey}, ${kind}, ${sql.json(parameters as never)}, ${sql.json(decide() as never)})
    on conflict (idempotency_key) do nothing
    returning outcome`
  if (inserted) return { outcome: inserted.outcome, performed: true }
  const [existing] = await sql<{ kind: string; parameters: Record<string, unknown>; outcome: Outcome }[]>`
    select kind, parameters, outcome from simulated_processor.operations where idempotency_key = ${idempotencyKey}`
  if (!existing || existing.kind !== kind || canonicalJson(existing.parameters) !== canonicalJson(parameters)) {
    throw new ProcessorIdempotencyError(`idempotency key ${idempotencyKey} was first used with other parameters`)
  }
  return { outcome: existing.outcome, performed: false }
}

const DECLINES: Record<string, { failureCode: string; failureMessage: string }> = {
  pm_card_chargeDeclined: { failureCode: 'generic_decline', failureMessage: 'Your card was declined.' },
  pm_card_chargeDeclinedInsufficientFunds: { failureCode: 'insufficient_funds', failureMessage: 'Your card has insufficient funds.' },
  pm_card_insufficientFunds: { failureCode: 'insufficient_funds', failureMessage: 'Your card has insufficient funds.' },
  pm_card_chargeDeclinedExpiredCard: { failureCode: 'expired_card', failureMessage: 'Your card has expired.' },
}
const SUCCEEDING = ['pm_card_visa', 'pm_card_mastercard', 'pm_card_slow', 'pm_card_responseLost', 'pm_card_timeoutBeforeCharge']
const KNOWN_SOURCES = new Set([...SUCCEEDING, ...Object.keys(DECLINES), 'pm_card_processorDown'])

function chargeOutcome(source: string, idempotencyKey: string): ChargeOutcome {
  const decline = DECLINES[source]
  return decline ? { status: 'failed', ...decline } : { status: 'succeeded', processorReference: reference('sim_ch', idempotencyKey) }
}

/** Deterministic in the key: a retry of the same operation gets the same processor reference back. */
function reference(prefix: string, idempotencyKey: string): string {
  return `${prefix}_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 24)}`
}

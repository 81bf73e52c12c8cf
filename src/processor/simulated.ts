// A stand-in processor driven by test sources, as in Stripe's test mode, and faithful where retries are concerned:
// it keeps a durable ledger (simulated_processor.operations, in the service's own PostgreSQL) of every operation
// it performed under each idempotency key, so a key sent again gets the first outcome, even after a restart;
// the same key with other parameters is refused, as Stripe's idempotency_error; and lookup answers from it.
import { createHash } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Sql, Transaction } from '../db/connect.js'
import { canonicalJson } from '../schemas/canonical-json.js'
import {
  type ChargeOutcome,
  type ChargeRequest,
  type OperationRecord,
  type PaymentProcessor,
  ProcessorIdempotencyError,
  ProcessorRequestError,
  ProcessorUnavailableError,
} from './processor.js'
import { behaviourOf, type SourceBehaviour } from './simulated-cards.js'
import {
  disputeAtOnce,
  recordSettlement,
  type SimulatedControls as LaterControls,
  simulatedLater,
} from './simulated-later-outcomes.js'
import { type SimulatedPayouts, simulatedPayouts } from './simulated-payouts.js'

/** What a developer makes happen at the simulated processor: later outcomes, and payouts. */
export type SimulatedControls = LaterControls & SimulatedPayouts

/**
 * The simulated processor, with the controls of its later outcomes (src/processor/simulated-later-outcomes.ts) and
 * of its payouts (src/processor/simulated-payouts.ts).
 */
export interface SimulatedProcessor extends PaymentProcessor {
  controls: SimulatedControls
}

/**
 * Test sources: src/processor/simulated-cards.ts. A payment that needs authentication answers requires_action with
 * a page of `publicUrl` (the service serves it: src/routes/simulated-processor.ts); a bank debit answers processing.
 */
export function createSimulatedProcessor(options: {
  sql: Sql
  slowDelayMs?: number
  publicUrl?: string
}): SimulatedProcessor {
  const { sql } = options
  const slowDelayMs = options.slowDelayMs ?? 2000
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:3000'
  const { later, controls, afterRefund } = simulatedLater(sql)
  // What has timed out once already: the next attempt of the same thing goes through.
  const timedOutOnce = new Set<string>()
  const timeOutOnce = (what: string) => {
    if (timedOutOnce.has(what)) return
    timedOutOnce.add(what)
    throw new ProcessorUnavailableError('simulated timeout before anything was done')
  }

  async function chargeOrAuthorize(kind: 'charge' | 'authorization', request: ChargeRequest) {
    const { amountCents, currency, source, idempotencyKey } = request
    if (source === 'pm_card_processorDown') throw new ProcessorUnavailableError('simulated processor outage')
    const behaviour = behaviourOf(source)
    if (!behaviour)
      throw new ProcessorRequestError('source', 'resource_missing', `No such PaymentMethod: '${source.slice(0, 60)}'`)
    if (behaviour.kind === 'settles_later') refuseBankDebit(kind, request)
    if (source === 'pm_card_timeoutBeforeCharge') timeOutOnce(`${kind}:${amountCents}:${currency}`)
    const parameters = { amount_cents: amountCents, currency, source, charge_id: request.chargeId }
    const decide = () =>
      chargeOutcome(
        behaviour,
        idempotencyKey,
        `${publicUrl}/simulated-processor/authenticate/`,
        request.returnUrl ?? null,
      )
    const disputed = async (tx: Transaction, made: ChargeOutcome) => {
      if (made.status === 'succeeded') await disputeAtOnce(tx, made.processorReference, request.chargeId, amountCents)
    }
    const { outcome, performed } = await perform<ChargeOutcome>(
      sql,
      { idempotencyKey, kind, parameters },
      decide,
      source === 'pm_card_createDispute' ? disputed : undefined,
    )
    if (performed && source === 'pm_card_slow') await sleep(slowDelayMs)
    if (performed && source === 'pm_card_responseLost')
      throw new ProcessorUnavailableError(`simulated timeout: ${kind} done, answer lost`)
    return outcome
  }

  /**
   * Captures, voids and refunds behave as the charge they act on: slow, losing answers, timing out first. Those of a
   * pm_card_decidedLater payment are received, and decided later (the decide control).
   */
  async function settle<Outcome>(
    kind: 'capture' | 'void' | 'refund',
    chargeReference: string,
    idempotencyKey: string,
    parameters: Record<string, unknown>,
    outcome: () => Outcome,
    /** What else changes at the processor once it is performed (the payment's state; a refund that will fail). */
    performedThen: (tx: Transaction, outcome: Outcome) => Promise<unknown>,
  ) {
    const [charge] = await sql<{ source: string }[]>`
      select parameters->>'source' as source from simulated_processor.operations
      where kind in ('charge', 'authorization') and outcome->>'processorReference' = ${chargeReference}`
    if (charge?.source === 'pm_card_timeoutBeforeCharge')
      timeOutOnce(`${kind}:${chargeReference}:${JSON.stringify(parameters)}`)
    const decidedLater = charge?.source === 'pm_card_decidedLater'
    const done = await perform<Outcome>(
      sql,
      { idempotencyKey, kind, parameters: { charge_reference: chargeReference, ...parameters } },
      decidedLater ? () => ({ ...outcome(), decidedLater: true }) : outcome,
      decidedLater ? undefined : performedThen,
    )
    if (done.performed && charge?.source === 'pm_card_slow') await sleep(slowDelayMs)
    if (done.performed && charge?.source === 'pm_card_responseLost')
      throw new ProcessorUnavailableError(`simulated timeout: ${kind} done, answer lost`)
    return done.outcome
  }

  return {
    later,
    controls: { ...controls, ...simulatedPayouts(sql) },
    charge: (request) => chargeOrAuthorize('charge', request),
    authorize: (request) => chargeOrAuthorize('authorization', request),
    capture: ({ chargeReference, amountCents, idempotencyKey }) =>
      settle(
        'capture',
        chargeReference,
        idempotencyKey,
        { amount_cents: amountCents },
        () => ({ processorReference: reference('sim_cp', idempotencyKey) }),
        (tx) => recordSettlement(tx, chargeReference, { status: 'succeeded', amountCapturedCents: amountCents }),
      ),
    void: ({ chargeReference, idempotencyKey }) =>
      settle(
        'void',
        chargeReference,
        idempotencyKey,
        {},
        () => ({ processorReference: reference('sim_vd', idempotencyKey) }),
        (tx) => recordSettlement(tx, chargeReference, { status: 'canceled' }),
      ),
    refund: ({ chargeReference, amountCents, idempotencyKey }) =>
      settle(
        'refund',
        chargeReference,
        idempotencyKey,
        { amount_cents: amountCents },
        () => ({ processorReference: reference('sim_re', idempotencyKey) }),
        (tx, done) =>
          afterRefund(tx, {
            object: 'refund',
            reference: done.processorReference,
            paymentReference: chargeReference,
            operationId: idempotencyKey,
            status: 'succeeded',
            amountCents,
          }),
      ),

    // Its ledger is read in the same database it was written to: it cannot lag.
    async lookup({ request: { idempotencyKey } }) {
      const [row] = await sql<{ kind: OperationRecord['kind']; outcome: OperationRecord['outcome'] }[]>`
        select kind, outcome from simulated_processor.operations where idempotency_key = ${idempotencyKey}`
      return row && ({ kind: row.kind, outcome: row.outcome } as OperationRecord)
    },
  }
}

/**
 * Performs an operation once per idempotency key: the first call records its outcome, and what else changes at the
 * processor with it (`then`: a payment's state, a dispute opened), in one transaction, as a processor does: a crash
 * between the two would leave a capture recorded on a payment that still says requires_capture. Later calls with the
 * same parameters get that outcome back (performed: false); with other parameters they are refused.
 */
async function perform<Outcome>(
  sql: Sql,
  operation: { idempotencyKey: string; kind: OperationRecord['kind']; parameters: Record<string, unknown> },
  decide: () => Outcome,
  then?: (tx: Transaction, outcome: Outcome) => Promise<unknown>,
): Promise<{ outcome: Outcome; performed: boolean }> {
  const { idempotencyKey, kind, parameters } = operation
  const record = async (db: Sql | Transaction) => {
    const [row] = await db<{ outcome: Outcome }[]>`
      insert into simulated_processor.operations (idempotency_key, kind, parameters, outcome)
      values (${idempotencyKey}, ${kind}, ${db.json(parameters as never)}, ${db.json(decide() as never)})
      on conflict (idempotency_key) do nothing
      returning outcome`
    return row
  }
  // Nothing else changes with it (most charges): one statement, no transaction to open.
  const inserted = then
    ? await sql.begin(async (tx) => {
        const row = await record(tx)
        if (row) await then(tx, row.outcome)
        return row
      })
    : await record(sql)
  if (inserted) return { outcome: inserted.outcome, performed: true }
  const [existing] = await sql<{ kind: string; parameters: Record<string, unknown>; outcome: Outcome }[]>`
    select kind, parameters, outcome from simulated_processor.operations where idempotency_key = ${idempotencyKey}`
  if (!existing || existing.kind !== kind || canonicalJson(existing.parameters) !== canonicalJson(parameters)) {
    throw new ProcessorIdempotencyError(`idempotency key ${idempotencyKey} was first used with other parameters`)
  }
  return { outcome: existing.outcome, performed: false }
}

function chargeOutcome(
  behaviour: SourceBehaviour,
  idempotencyKey: string,
  authenticationPage: string,
  returnUrl: string | null,
): ChargeOutcome {
  const processorReference = reference('sim_ch', idempotencyKey)
  switch (behaviour.kind) {
    case 'succeeds':
      return { status: 'succeeded', processorReference }
    case 'declines':
      return { status: 'failed', failureCode: behaviour.failureCode, failureMessage: behaviour.failureMessage }
    case 'authenticates':
      return {
        status: 'requires_action',
        processorReference,
        nextAction: { type: 'redirect_to_url', url: `${authenticationPage}${processorReference}`, returnUrl },
      }
    case 'settles_later':
      return { status: 'processing', processorReference }
  }
}

/** As Stripe: a bank debit is never authorized to capture later, and needs the customer's mandate. */
function refuseBankDebit(kind: 'charge' | 'authorization', request: ChargeRequest): void {
  if (kind === 'authorization')
    throw new ProcessorRequestError(
      'source',
      'payment_method_unsupported',
      'A bank debit cannot be authorized to capture later: charge it with capture left out.',
    )
  if (!request.mandate)
    throw new ProcessorRequestError(
      'mandate',
      'parameter_missing',
      'A bank debit needs the customer’s mandate: send mandate with the customer’s ip_address and user_agent.',
    )
}

/** Deterministic in the key: a retry of the same operation gets the same processor reference back. */
function reference(prefix: string, idempotencyKey: string): string {
  return `${prefix}_${createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 24)}`
}

/** The simulated processor's controls, if `processor` is the simulated one (its pages are served then). */
export function simulatedControlsOf(processor: PaymentProcessor): SimulatedControls | undefined {
  return 'controls' in processor ? (processor as SimulatedProcessor).controls : undefined
}

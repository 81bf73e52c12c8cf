// Where a payment's state at the processor takes its charge, as one table that two readers share: the inbox moves
// charges by it (src/processor-events/apply.ts), and the comparison (src/processor-events/compare.ts) holds the books
// to it, so a charge the events moved is a charge the comparison finds in agreement, whichever way it reached its
// state.
import { type ChargeRow, isExpiryVoid } from '../charges/repository.js'
import type { ChargeSettings } from '../processor/pricing.js'
import { CHARGE_EVENT } from '../charges/record-charge.js'
import type { PaymentState, PaymentStatus } from '../processor/later-outcomes.js'
import type { Charge } from '../schemas/charge.js'
import type { EventType } from '../schemas/webhook.js'

type Status = Charge['status']
type Cancellation = NonNullable<PaymentState['cancellation']>

/**
 * The charge's status once the processor says the payment's: from an undecided charge (requires_action,
 * processing) and from an authorization (requires_capture). Unset: no move from there (a charge is final, or
 * the news is older than what the books hold). A payment canceled at the processor fails an undecided charge
 * (the customer never paid), and ends an authorization as voided, or expired when it lapsed there.
 */
export const CHARGE_STATUS_OF_PAYMENT: Record<
  PaymentStatus,
  { undecided?: Status; authorized?: Status | Record<Cancellation, Status> }
> = {
  requires_action: { undecided: 'requires_action' },
  processing: { undecided: 'processing' },
  requires_capture: { undecided: 'requires_capture', authorized: 'requires_capture' },
  succeeded: { undecided: 'succeeded', authorized: 'succeeded' },
  failed: { undecided: 'failed' },
  canceled: { undecided: 'failed', authorized: { canceled: 'voided', expired: 'expired' } },
}

/**
 * The charge statuses that agree with a payment's status: every status the table leads to from it. (An
 * authorization the service itself let expire is voided at the processor, so `expired` agrees with any
 * cancellation.)
 */
export function agreesWith(charge: Status, payment: PaymentStatus): boolean {
  // Awaiting a decision: the payment is still authorized at the processor. Decided there and not here is a
  // discrepancy until its news arrives, as for an undecided charge.
  if (charge === 'capture_pending' || charge === 'void_pending') return payment === 'requires_capture'
  const { undecided, authorized } = CHARGE_STATUS_OF_PAYMENT[payment]
  const leads = [undecided, ...(typeof authorized === 'object' ? Object.values(authorized) : [authorized])]
  return leads.includes(charge)
}

/** How long an authorization that a customer's authentication made may wait, and the processor's pricing. */
export type LaterSettings = ChargeSettings

/** A charge's move, as the columns that change and the event that tells it; or why there is none. */
export type ChargeMove =
  | { set: Partial<ChargeRow> & { status: Status }; event: EventType }
  | { wait: string }
  | { ignore: string }

const UNDECIDED = new Set<Status>(['requires_action', 'processing'])
/** A capture or void the processor received to decide later (SettlementOutcome.decidedLater), by its status. */
const DECIDED_LATER: Partial<Record<Status, 'capture' | 'void'>> = { capture_pending: 'capture', void_pending: 'void' }
const NO_PENDING_OPERATION = {
  pending_operation: null,
  pending_operation_id: null,
  pending_amount_cents: null,
  pending_until: null,
}

/**
 * Where the payment's news takes the charge: forward only, and never past an operation of its own in flight. A
 * capture or void decided later is decided by the news: captured, canceled (voided, or expired when the
 * authorization lapsed first), or refused, which gives the authorization back; any other news of the payment is
 * older than the operation, and changes nothing.
 */
export function chargeMove(
  charge: ChargeRow,
  payment: PaymentState,
  settings: LaterSettings,
  now = new Date(),
): ChargeMove {
  const from = charge.status
  const undecided = UNDECIDED.has(from)
  const decidedLater = DECIDED_LATER[from]
  const lead = undecided
    ? CHARGE_STATUS_OF_PAYMENT[payment.status].undecided
    : from === 'requires_capture' || decidedLater
      ? CHARGE_STATUS_OF_PAYMENT[payment.status].authorized
      : undefined
  const to = typeof lead === 'object' ? lead[payment.cancellation ?? 'canceled'] : lead
  if (decidedLater) return decision(charge, payment, to, decidedLater, settings, now)
  // The refusal of a capture or void decided later, overtaking the answer it follows: it waits for the operation to
  // be recorded as waiting for it.
  if (payment.refused && payment.refused.operation === charge.pending_operation)
    return { wait: `the ${charge.pending_operation} of charge ${charge.id} is being recorded` }
  if (to === undefined || to === from) return ignore(charge)
  if (!undecided) {
    // An authorization moved at the processor (its dashboard), unless this is the service's own capture or void
    // being recorded, or one of them in flight.
    if (charge.pending_operation === 'capture')
      return { wait: `a capture of charge ${charge.id} is in flight or being recorded` }
    if (charge.pending_operation === 'void' && to !== 'succeeded')
      return { wait: `the void of charge ${charge.id} is being recorded` }
  }
  return settledMove(charge, payment, to, settings, now, undecided)
}

const ignore = (charge: ChargeRow): ChargeMove => ({ ignore: `charge ${charge.id} is ${charge.status}` })

/**
 * The move of a charge waiting for its capture or void (`operation`) to be decided: to where the news leads, the
 * operation no longer pending; back to requires_capture only when the news is this operation's refusal.
 */
function decision(
  charge: ChargeRow,
  payment: PaymentState,
  to: Status | undefined,
  operation: 'capture' | 'void',
  settings: LaterSettings,
  now: Date,
): ChargeMove {
  if (to === undefined) return ignore(charge)
  if (to === 'requires_capture') {
    if (payment.refused?.operation !== operation)
      return { ignore: `charge ${charge.id} is ${charge.status}: the payment's news does not decide its ${operation}` }
    return { set: { status: to, ...NO_PENDING_OPERATION }, event: `charge.${operation}_failed` }
  }
  // The expiry worker's void ends the authorization as expired, whichever way the processor tells the cancellation.
  const settled = to === 'voided' && isExpiryVoid(charge) ? 'expired' : to
  const move = settledMove(charge, payment, settled, settings, now, false)
  return 'set' in move ? { ...move, set: { ...move.set, ...NO_PENDING_OPERATION } } : move
}

/** The columns and event of a charge's move to `to`, from an undecided charge or from an authorization. */
function settledMove(
  charge: ChargeRow,
  payment: PaymentState,
  to: Status,
  settings: LaterSettings,
  now: Date,
  undecided: boolean,
): ChargeMove {
  switch (to) {
    case 'processing':
      return { set: { status: 'processing', next_action: null }, event: CHARGE_EVENT.processing }
    case 'requires_capture': {
      const expiresAt = new Date(now.getTime() + settings.authorizationExpiresDays * 86_400_000)
      return {
        set: { status: 'requires_capture', next_action: null, authorization_expires_at: expiresAt },
        event: CHARGE_EVENT.requires_capture,
      }
    }
    case 'succeeded': {
      // A capture decided later captures what it asked for, unless the news says how much.
      const amountCaptured = payment.amountCapturedCents || charge.pending_amount_cents || charge.amount_cents
      const set = {
        status: 'succeeded' as const,
        captured: true,
        amount_captured_cents: amountCaptured,
        next_action: null,
      }
      return { set, event: undecided ? CHARGE_EVENT.succeeded : 'charge.captured' }
    }
    case 'failed': {
      const canceled = payment.status === 'canceled'
      const failure = canceled
        ? { failure_code: 'canceled', failure_message: 'The payment was canceled at the processor.' }
        : {
            failure_code: payment.failureCode ?? 'payment_failed',
            failure_message: payment.failureMessage ?? 'The payment failed.',
          }
      return { set: { status: 'failed', next_action: null, ...failure }, event: CHARGE_EVENT.failed }
    }
    case 'voided':
    case 'expired':
      return { set: { status: to }, event: CHARGE_EVENT[to] }
    case 'requires_action':
    case 'capture_pending':
    case 'void_pending':
      return ignore(charge)
  }
}

// The simulated processor's test sources, named as Stripe's test payment methods (docs.stripe.com/testing), and
// what each does. docs/charges.md has the same table for people; test/processor/contract.test.ts holds both
// processors to it.

export type SourceBehaviour =
  | { kind: 'succeeds' }
  | { kind: 'declines'; failureCode: string; failureMessage: string }
  /** 3-D Secure: the customer must authenticate; then it succeeds, or is declined with `thenDeclines`. */
  | { kind: 'authenticates'; thenDeclines?: { failureCode: string; failureMessage: string } }
  /** A bank debit: `processing` until it settles (the settle control), then succeeds or fails; `never`: stays. */
  | { kind: 'settles_later'; settles: 'succeeds' | 'never' | { failureCode: string; failureMessage: string } }

const succeeds: SourceBehaviour = { kind: 'succeeds' }
const declines = (failureCode: string, failureMessage: string): SourceBehaviour => ({
  kind: 'declines',
  failureCode,
  failureMessage,
})
const insufficientFunds = { failureCode: 'insufficient_funds', failureMessage: 'Your card has insufficient funds.' }

/**
 * - pm_card_slow: charged at once, answered after a delay (2 s by default), long enough for a client to time out
 * - pm_card_processorDown: fails as unavailable, every time, having done nothing
 * - pm_card_responseLost: charged, then the answer is lost (the service sees a timeout after the money moved)
 * - pm_card_timeoutBeforeCharge: times out before doing anything, the first time a charge of that amount and
 *   currency is attempted in this process; later attempts go through
 * - pm_card_createDispute: succeeds, then the customer disputes it (an event, at once)
 * - pm_card_refundFail: succeeds; its refunds succeed, then fail (an event, at once)
 * - pm_card_decidedLater: succeeds; its captures, voids and refunds are received and decided later, as Adyen's are
 *   (the decide control tells each decision)
 * Captures, voids and refunds of a pm_card_slow, pm_card_responseLost or pm_card_timeoutBeforeCharge charge behave
 * the same way. Anything else is refused, as Stripe refuses a payment method it does not know.
 */
const SOURCES: Record<string, SourceBehaviour> = {
  pm_card_visa: succeeds,
  pm_card_mastercard: succeeds,
  pm_card_slow: succeeds,
  pm_card_responseLost: succeeds,
  pm_card_timeoutBeforeCharge: succeeds,
  pm_card_createDispute: succeeds,
  pm_card_refundFail: succeeds,
  pm_card_decidedLater: succeeds,
  pm_card_chargeDeclined: declines('generic_decline', 'Your card was declined.'),
  pm_card_chargeDeclinedInsufficientFunds: declines(insufficientFunds.failureCode, insufficientFunds.failureMessage),
  pm_card_insufficientFunds: declines(insufficientFunds.failureCode, insufficientFunds.failureMessage),
  pm_card_chargeDeclinedExpiredCard: declines('expired_card', 'Your card has expired.'),
  pm_card_authenticationRequired: { kind: 'authenticates' },
  pm_card_threeDSecure2Required: { kind: 'authenticates' },
  pm_card_authenticationRequiredChargeDeclinedInsufficientFunds: {
    kind: 'authenticates',
    thenDeclines: insufficientFunds,
  },
  pm_usBankAccount_success: { kind: 'settles_later', settles: 'succeeds' },
  pm_usBankAccount_insufficientFunds: {
    kind: 'settles_later',
    settles: { failureCode: 'insufficient_funds', failureMessage: 'The bank account has insufficient funds.' },
  },
  pm_usBankAccount_accountClosed: {
    kind: 'settles_later',
    settles: { failureCode: 'account_closed', failureMessage: 'The bank account has been closed.' },
  },
  pm_usBankAccount_processing: { kind: 'settles_later', settles: 'never' },
  pm_card_processorDown: succeeds,
}

/** What `source` does; undefined for one the simulated processor does not know (own names only: not `toString`). */
export function behaviourOf(source: string): SourceBehaviour | undefined {
  return Object.hasOwn(SOURCES, source) ? SOURCES[source] : undefined
}

/** A failed authentication, in Stripe's words (its last_payment_error code). */
export const AUTHENTICATION_FAILED = {
  failureCode: 'payment_intent_authentication_failure',
  failureMessage: 'The customer did not authenticate the payment.',
}

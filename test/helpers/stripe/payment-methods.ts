// Stripe's test payment methods, as docs.stripe.com/testing lists them: what each does when a PaymentIntent is
// confirmed with it. Only these exist in the test server; any other id is "No such PaymentMethod".

export type CardBehaviour =
  | { kind: 'succeeds' }
  /** docs.stripe.com/testing#declined-payments: the error's code, decline_code and message. */
  | { kind: 'declines'; code: string; declineCode: string; message: string }
  /** docs.stripe.com/testing#regulatory-cards: 3D Secure is required for every payment. */
  | { kind: 'requires_authentication' }

const succeeds: CardBehaviour = { kind: 'succeeds' }
const declined = (declineCode: string, message = 'Your card was declined.'): CardBehaviour => ({ kind: 'declines', code: 'card_declined', declineCode, message })

export const TEST_PAYMENT_METHODS: Record<string, CardBehaviour> = {
  pm_card_visa: succeeds,
  pm_card_visa_debit: succeeds,
  pm_card_mastercard: succeeds,
  pm_card_amex: succeeds,
  pm_card_discover: succeeds,
  pm_card_us: succeeds,
  pm_card_gb: succeeds,
  pm_card_de: succeeds,
  // Succeed, then are disputed or refuse refunds later (docs.stripe.com/testing#disputes, #refunds).
  pm_card_createDispute: succeeds,
  pm_card_refundFail: succeeds,
  pm_card_chargeDeclined: declined('generic_decline'),
  pm_card_visa_chargeDeclined: declined('generic_decline'),
  pm_card_chargeDeclinedInsufficientFunds: declined('insufficient_funds', 'Your card has insufficient funds.'),
  pm_card_visa_chargeDeclinedInsufficientFunds: declined('insufficient_funds', 'Your card has insufficient funds.'),
  pm_card_chargeDeclinedLostCard: declined('lost_card'),
  pm_card_visa_chargeDeclinedLostCard: declined('lost_card'),
  pm_card_chargeDeclinedStolenCard: declined('stolen_card'),
  pm_card_visa_chargeDeclinedStolenCard: declined('stolen_card'),
  pm_card_chargeDeclinedFraudulent: declined('fraudulent'),
  pm_card_visa_chargeDeclinedFraudulent: declined('fraudulent'),
  pm_card_visa_chargeDeclinedVelocityLimitExceeded: declined('card_velocity_exceeded'),
  pm_card_chargeDeclinedExpiredCard: { kind: 'declines', code: 'expired_card', declineCode: 'expired_card', message: 'Your card has expired.' },
  pm_card_chargeDeclinedIncorrectCvc: { kind: 'declines', code: 'incorrect_cvc', declineCode: 'incorrect_cvc', message: "Your card's security code is incorrect." },
  pm_card_chargeDeclinedProcessingError: {
    kind: 'declines',
    code: 'processing_error',
    declineCode: 'processing_error',
    message: 'An error occurred while processing your card. Try again in a little bit.',
  },
  pm_card_authenticationRequired: { kind: 'requires_authentication' },
  pm_card_threeDSecure2Required: { kind: 'requires_authentication' },
}

/**
 * docs.stripe.com/currencies: the minimum charge amount of each currency, in its smallest unit (jpy has no minor
 * unit: 50 is ¥50). Amounts are at most eight digits.
 */
export const MINIMUM_AMOUNTS: Record<string, number> = {
  usd: 50,
  eur: 50,
  gbp: 30,
  cad: 50,
  aud: 50,
  chf: 50,
  jpy: 50,
  sek: 300,
  nok: 300,
  dkk: 250,
  nzd: 50,
  sgd: 50,
  hkd: 400,
  mxn: 1000,
  pln: 200,
  czk: 1500,
}
export const MAXIMUM_AMOUNT = 99_999_999

/** docs.stripe.com/currencies#zero-decimal */
export const ZERO_DECIMAL_CURRENCIES = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf'])

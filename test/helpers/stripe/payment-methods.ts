// Stripe's test payment methods, as docs.stripe.com/testing lists them: what each does when a PaymentIntent is
// confirmed with it. Only these exist in the test server; any other id is "No such PaymentMethod".

export type CardBehaviour =
  | { kind: 'succeeds' }
  /** docs.stripe.com/testing#declined-payments: the error's code, decline_code and message. */
  | { kind: 'declines'; code: string; declineCode: string; message: string }
  /**
   * docs.stripe.com/testing#regulatory-cards: 3D Secure is required; once authenticated it succeeds, or is declined.
   */
  | { kind: 'requires_authentication'; thenDeclines?: { code: string; declineCode: string; message: string } }
  /**
   * docs.stripe.com/payments/ach-debit/accept-a-payment#test-integration: a bank debit is processing after its
   * confirmation, then succeeds or fails (or stays processing); it needs mandate_data.
   */
  | { kind: 'bank_debit'; settles: 'succeeds' | 'stays' | { code: string; message: string } }

const succeeds: CardBehaviour = { kind: 'succeeds' }
const declined = (declineCode: string, message = 'Your card was declined.'): CardBehaviour => ({
  kind: 'declines',
  code: 'card_declined',
  declineCode,
  message,
})

const TEST_PAYMENT_METHODS: Record<string, CardBehaviour> = {
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
  // An inquiry: disputed, but no funds are withdrawn (docs.stripe.com/testing#disputes).
  pm_card_createDisputeInquiry: succeeds,
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
  pm_card_chargeDeclinedExpiredCard: {
    kind: 'declines',
    code: 'expired_card',
    declineCode: 'expired_card',
    message: 'Your card has expired.',
  },
  pm_card_chargeDeclinedIncorrectCvc: {
    kind: 'declines',
    code: 'incorrect_cvc',
    declineCode: 'incorrect_cvc',
    message: "Your card's security code is incorrect.",
  },
  pm_card_chargeDeclinedProcessingError: {
    kind: 'declines',
    code: 'processing_error',
    declineCode: 'processing_error',
    message: 'An error occurred while processing your card. Try again in a little bit.',
  },
  pm_card_authenticationRequired: { kind: 'requires_authentication' },
  pm_card_threeDSecure2Required: { kind: 'requires_authentication' },
  pm_card_authenticationRequiredChargeDeclinedInsufficientFunds: {
    kind: 'requires_authentication',
    thenDeclines: {
      code: 'card_declined',
      declineCode: 'insufficient_funds',
      message: 'Your card has insufficient funds.',
    },
  },
  pm_usBankAccount_success: { kind: 'bank_debit', settles: 'succeeds' },
  pm_usBankAccount_processing: { kind: 'bank_debit', settles: 'stays' },
  pm_usBankAccount_insufficientFunds: {
    kind: 'bank_debit',
    settles: {
      code: 'insufficient_funds',
      message: 'The customer’s account has insufficient funds to cover this payment.',
    },
  },
  pm_usBankAccount_accountClosed: {
    kind: 'bank_debit',
    settles: { code: 'account_closed', message: 'The customer’s bank account has been closed.' },
  },
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
export const ZERO_DECIMAL_CURRENCIES = new Set([
  'bif',
  'clp',
  'djf',
  'gnf',
  'jpy',
  'kmf',
  'krw',
  'mga',
  'pyg',
  'rwf',
  'ugx',
  'vnd',
  'vuv',
  'xaf',
  'xof',
  'xpf',
])

/** What the test payment method `id` does; undefined for any other id (own names only: not `toString`). */
export function testPaymentMethod(id: string): CardBehaviour | undefined {
  return Object.hasOwn(TEST_PAYMENT_METHODS, id) ? TEST_PAYMENT_METHODS[id] : undefined
}

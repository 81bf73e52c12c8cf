// Adyen's payments and their modifications, as the Checkout API v72 specification (Adyen/adyen-openapi) and
// docs.adyen.com describe them:
// - POST /payments answers at once: Authorised, Refused (refusalReason and its code), Received (decided later by an
//   AUTHORISATION notification) or RedirectShopper with a redirect `action` (3-D Secure), completed by
//   /payments/details. Without additionalData.manualCapture the payment is captured at once, and Adyen sends no
//   CAPTURE notification for that (online-payments/capture, "automatic capture").
// - A capture, cancel, refund or reversal is answered 201 `received` with a pspReference of its own; it is decided
//   later and told only by a notification (CAPTURE / CAPTURE_FAILED, CANCELLATION, REFUND / REFUND_FAILED,
//   CANCEL_OR_REFUND), with success 'false' and a reason when it could not be done.
// - Test cards and names (development-resources/test-cards, testing/result-codes): 4917 6100 0000 0000 and
//   5454 5454 5454 5454 ask for 3-D Secure; paymentMethod.holderName picks a refusal (REFUSALS) or a modification
//   that fails after it succeeded ('capture failed', 'refund failed'); card data comes as `number` or as
//   `encryptedCardNumber: 'test_<number>'` (Adyen's unencrypted test values).
// Where Adyen's pages say nothing (a capture over what is left, the codes of some refusals of a modification), the
// choice is written where it is made.
import { randomBytes } from 'node:crypto'
import type { NotificationItem } from './notifications.js'

export interface Amount {
  value: number
  currency: string
}

/** A refusal of a request: the ServiceError Adyen answers. */
export class AdyenFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly errorType = 'validation',
  ) {
    super(message)
  }
  body(pspReference?: string) {
    return {
      status: this.status,
      errorCode: this.errorCode,
      message: this.message,
      errorType: this.errorType,
      pspReference,
    }
  }
}

/** holderName → [resultCode, refusalReason, refusalReasonCode] (testing/result-codes, "Values for testing"). */
export const REFUSALS: Record<string, [string, string, string]> = {
  UNKNOWN: ['Error', 'Unknown', '0'],
  DECLINED: ['Refused', 'Refused', '2'],
  REFERRAL: ['Refused', 'Referral', '3'],
  ERROR: ['Error', 'Acquirer Error', '4'],
  BLOCK_CARD: ['Refused', 'Blocked Card', '5'],
  CARD_EXPIRED: ['Refused', 'Expired Card', '6'],
  INVALID_AMOUNT: ['Refused', 'Invalid Amount', '7'],
  INVALID_CARD_NUMBER: ['Refused', 'Invalid Card Number', '8'],
  ISSUER_UNAVAILABLE: ['Refused', 'Issuer Unavailable', '9'],
  NOT_SUPPORTED: ['Refused', 'Not supported', '10'],
  NOT_3D_AUTHENTICATED: ['Refused', '3D Not Authenticated', '11'],
  NOT_ENOUGH_BALANCE: ['Refused', 'Not enough balance', '12'],
  ACQUIRER_FRAUD: ['Refused', 'Acquirer Fraud', '14'],
  CANCELLED: ['Refused', 'Cancelled', '15'],
  SHOPPER_CANCELLED: ['Refused', 'Shopper Cancelled', '16'],
}
const THREE_D_SECURE_CARDS = new Set(['4917610000000000', '5454545454545454'])

type PaymentState = 'redirect' | 'received' | 'authorised' | 'refused' | 'error' | 'cancelled'
export type ModificationKind = 'capture' | 'cancel' | 'refund' | 'reversal'

export interface Payment {
  pspReference: string
  merchantAccount: string
  reference: string
  amount: Amount
  brand: string
  holderName: string
  state: PaymentState
  manualCapture: boolean
  captured: number
  refunded: number
  returnUrl?: string
  refusal?: { reason: string; code: string }
}

export interface Modification {
  pspReference: string
  payment: string
  kind: ModificationKind
  amount: Amount
  reference?: string
  merchantAccount: string
  state: 'received' | 'succeeded' | 'failed'
}

type Body = Record<string, unknown>

/** Adyen's pspReferences are 16 characters, letters and digits. */
export function pspReference(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
  return [...randomBytes(16)].map((byte) => alphabet[byte % alphabet.length]).join('')
}

export class AdyenBook {
  readonly payments = new Map<string, Payment>()
  readonly modifications = new Map<string, Modification>()
  private readonly redirectResults = new Map<string, { payment: string; authenticated: boolean }>()

  constructor(
    readonly merchantAccounts: Set<string>,
    private readonly notify: (item: NotificationItem) => void,
    /** Unset: modifications are decided only on cue (decide); otherwise this long after they were received. */
    private readonly decideAfterMs?: number,
  ) {}

  pay(body: Body, redirectBase: string): Body {
    const merchantAccount = this.merchantAccountOf(body)
    const amount = amountOf(body)
    const method = (body.paymentMethod ?? {}) as Record<string, string | undefined>
    const number = method.number ?? method.encryptedCardNumber?.replace(/^test_/, '')
    if (!number || !luhn(number)) throw new AdyenFailure(422, '101', 'Invalid card number')
    const holderName = method.holderName ?? ''
    const additional = (body.additionalData ?? {}) as Record<string, unknown>
    const payment: Payment = {
      pspReference: pspReference(),
      merchantAccount,
      reference: String(body.reference ?? ''),
      amount,
      brand: number.startsWith('4') ? 'visa' : number.startsWith('3') ? 'amex' : 'mc',
      holderName,
      state: 'authorised',
      manualCapture: String(additional.manualCapture) === 'true',
      captured: 0,
      refunded: 0,
      returnUrl: typeof body.returnUrl === 'string' ? body.returnUrl : undefined,
    }
    // Required by the specification (PaymentRequest), for any payment method: a redirect may be needed.
    if (!payment.returnUrl) throw new AdyenFailure(422, '14_030', 'Return URL is missing.')
    this.payments.set(payment.pspReference, payment)
    if (THREE_D_SECURE_CARDS.has(number)) {
      payment.state = 'redirect'
      return {
        ...this.answer(payment),
        action: {
          paymentMethodType: 'scheme',
          url: `${redirectBase}/test/threeds/${payment.pspReference}`,
          method: 'GET',
          type: 'redirect',
        },
      }
    }
    if (holderName === 'PENDING') {
      payment.state = 'received'
      return this.answer(payment)
    }
    return this.authorise(payment, REFUSALS[holderName])
  }

  /** /payments/details after the shopper's redirect: the outcome of 3-D Secure decides the payment. */
  details(body: Body): Body {
    const redirectResult = ((body.details ?? {}) as Record<string, unknown>).redirectResult
    const result = typeof redirectResult === 'string' ? this.redirectResults.get(redirectResult) : undefined
    const payment = result && this.payments.get(result.payment)
    if (!result || payment?.state !== 'redirect')
      throw new AdyenFailure(422, '000', 'Invalid or already used redirectResult')
    this.redirectResults.delete(redirectResult as string)
    return this.authorise(payment, result.authenticated ? undefined : REFUSALS.NOT_3D_AUTHENTICATED)
  }

  /** The shopper's answer to 3-D Secure (the page at the action's url): the redirectResult it returns with. */
  authenticate(payment: string, authenticated: boolean): string {
    if (this.payments.get(payment)?.state !== 'redirect') throw new Error(`${payment} awaits no authentication`)
    const redirectResult = randomBytes(24).toString('base64url')
    this.redirectResults.set(redirectResult, { payment, authenticated })
    return redirectResult
  }

  /** A payment answered Received is decided (AUTHORISATION). */
  settle(payment: string, authorised: boolean): Payment {
    const found = this.payments.get(payment)
    if (found?.state !== 'received') throw new Error(`${payment} is not awaiting its authorisation`)
    this.authorise(found, authorised ? undefined : REFUSALS.DECLINED)
    return found
  }

  modify(kind: ModificationKind, payment: string, body: Body): Body {
    const merchantAccount = this.merchantAccountOf(body)
    const original = this.payments.get(payment)
    if (!original || original.merchantAccount !== merchantAccount)
      throw new AdyenFailure(422, '167', 'Original pspReference required for this operation')
    const amount = kind === 'capture' || kind === 'refund' ? amountOf(body) : original.amount
    const modification: Modification = {
      pspReference: pspReference(),
      payment,
      kind,
      amount,
      reference: typeof body.reference === 'string' ? body.reference : undefined,
      merchantAccount,
      state: 'received',
    }
    this.modifications.set(modification.pspReference, modification)
    if (this.decideAfterMs !== undefined)
      setTimeout(() => this.decide(modification.pspReference), this.decideAfterMs).unref()
    return {
      merchantAccount,
      paymentPspReference: payment,
      pspReference: modification.pspReference,
      ...(modification.reference !== undefined ? { reference: modification.reference } : {}),
      status: 'received',
      ...(kind === 'capture' || kind === 'refund' ? { amount } : {}),
    }
  }

  /** Decides a modification received earlier, and notifies its outcome (once: later calls do nothing). */
  decide(modification: string): Modification {
    const found = this.modifications.get(modification)
    if (!found) throw new Error(`no modification ${modification}`)
    if (found.state !== 'received') return found
    const payment = this.payments.get(found.payment)!
    const refusal = this.refusalOf(found, payment)
    found.state = refusal ? 'failed' : 'succeeded'
    const eventCode = { capture: 'CAPTURE', cancel: 'CANCELLATION', refund: 'REFUND', reversal: 'CANCEL_OR_REFUND' }
    const additionalData: Record<string, string> = {}
    if (!refusal) {
      if (found.kind === 'reversal') additionalData['modification.action'] = payment.captured > 0 ? 'refund' : 'cancel'
      this.apply(found, payment)
    }
    this.notifyModification(found, payment, eventCode[found.kind], refusal, additionalData)
    // What Adyen's test names make fail after success: the failure follows its success.
    if (!refusal && found.kind === 'capture' && payment.holderName === 'capture failed') {
      payment.captured -= found.amount.value
      this.notifyModification(found, payment, 'CAPTURE_FAILED', undefined, {})
    }
    if (!refusal && found.kind === 'refund' && payment.holderName === 'refund failed') {
      payment.refunded -= found.amount.value
      this.notifyModification(found, payment, 'REFUND_FAILED', undefined, {})
    }
    return found
  }

  /** Every modification not yet decided, decided now, in the order received. */
  decideAll(): Modification[] {
    return [...this.modifications.values()]
      .filter((m) => m.state === 'received')
      .map((m) => this.decide(m.pspReference))
  }

  /** A chargeback on a captured payment: NOTIFICATION_OF_CHARGEBACK, then CHARGEBACK (the money is taken). */
  chargeback(payment: string, amount?: number): void {
    const found = this.payments.get(payment)
    if (!found || found.captured - found.refunded <= 0) throw new Error(`${payment} has nothing to charge back`)
    const value = amount ?? found.captured - found.refunded
    for (const eventCode of ['NOTIFICATION_OF_CHARGEBACK', 'CHARGEBACK'])
      this.notify({
        ...this.itemOf(found, eventCode, true),
        amount: { value, currency: found.amount.currency },
        reason: 'Fraudulent transaction',
        additionalData: { chargebackReasonCode: '10.4', chargebackSchemeCode: found.brand },
      })
  }

  private authorise(payment: Payment, refusal: [string, string, string] | undefined): Body {
    if (refusal) {
      payment.state = refusal[0] === 'Error' ? 'error' : 'refused'
      payment.refusal = { reason: refusal[1], code: refusal[2] }
    } else {
      payment.state = 'authorised'
      if (!payment.manualCapture) payment.captured = payment.amount.value
    }
    this.notify({
      ...this.itemOf(payment, 'AUTHORISATION', !refusal),
      ...(refusal ? { reason: refusal[1] } : {}),
      // "An experimental field. Do not base your code on this field" (Webhooks-v1): filled here as it may be, not
      // as something a receiver can rely on to tell a payment held for capture from one captured at once.
      operations: refusal ? [] : payment.manualCapture ? ['CANCEL', 'CAPTURE', 'REFUND'] : ['REFUND'],
    })
    return this.answer(payment)
  }

  private answer(payment: Payment): Body {
    const resultCode = {
      redirect: 'RedirectShopper',
      received: 'Received',
      authorised: 'Authorised',
      refused: 'Refused',
      error: 'Error',
      cancelled: 'Cancelled',
    }[payment.state]
    return {
      pspReference: payment.pspReference,
      resultCode,
      merchantReference: payment.reference,
      amount: payment.amount,
      ...(payment.refusal ? { refusalReason: payment.refusal.reason, refusalReasonCode: payment.refusal.code } : {}),
    }
  }

  /** Why a modification cannot be done, or nothing. Adyen documents the rules, not the reasons' wording. */
  private refusalOf(modification: Modification, payment: Payment): string | undefined {
    if (payment.state !== 'authorised') return `Payment is ${payment.state}`
    const left = payment.captured - payment.refunded
    if (modification.amount.currency !== payment.amount.currency) return 'Currency mismatch'
    switch (modification.kind) {
      case 'capture':
        if (!payment.manualCapture || payment.captured > 0) return 'Payment already captured'
        return modification.amount.value > payment.amount.value ? 'Amount exceeds the authorised amount' : undefined
      case 'cancel':
        return payment.captured > 0 ? 'Payment already captured' : undefined
      case 'refund':
        return modification.amount.value > left ? 'Amount exceeds the captured amount left' : undefined
      case 'reversal':
        return payment.captured > 0 && left <= 0 ? 'Nothing left to refund' : undefined
    }
  }

  private apply(modification: Modification, payment: Payment): void {
    const left = payment.captured - payment.refunded
    if (modification.kind === 'capture') {
      // A partial capture cancels what is left (Adyen's default without multiple partial captures).
      payment.captured = modification.amount.value
    } else if (modification.kind === 'refund') {
      payment.refunded += modification.amount.value
    } else if (modification.kind === 'cancel' || (modification.kind === 'reversal' && payment.captured === 0)) {
      payment.state = 'cancelled'
    } else {
      modification.amount = { value: left, currency: payment.amount.currency }
      payment.refunded += left
    }
  }

  private notifyModification(
    modification: Modification,
    payment: Payment,
    eventCode: string,
    refusal: string | undefined,
    additionalData: Record<string, string>,
  ): void {
    this.notify({
      ...this.itemOf(payment, eventCode, !refusal),
      pspReference: modification.pspReference,
      originalReference: payment.pspReference,
      amount: modification.amount,
      ...(refusal ? { reason: refusal } : {}),
      additionalData,
    })
  }

  private itemOf(payment: Payment, eventCode: string, success: boolean): NotificationItem {
    return {
      eventCode,
      success: success ? 'true' : 'false',
      pspReference: payment.pspReference,
      merchantAccountCode: payment.merchantAccount,
      merchantReference: payment.reference,
      amount: payment.amount,
      eventDate: new Date().toISOString(),
      paymentMethod: payment.brand,
    }
  }

  private merchantAccountOf(body: Body): string {
    const merchantAccount = body.merchantAccount
    if (typeof merchantAccount !== 'string' || !this.merchantAccounts.has(merchantAccount))
      throw new AdyenFailure(422, '901', 'Invalid Merchant Account')
    return merchantAccount
  }
}

function amountOf(body: Body): Amount {
  const amount = body.amount as Partial<Amount> | undefined
  if (!amount || typeof amount.currency !== 'string' || !Number.isInteger(amount.value))
    throw new AdyenFailure(422, '100', "Required object 'amount' is not provided.")
  if (amount.value! <= 0) throw new AdyenFailure(422, '137', 'Invalid amount specified')
  return { value: amount.value!, currency: amount.currency.toUpperCase() }
}

function luhn(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false
  let sum = 0
  for (let index = 0; index < number.length; index++) {
    let digit = Number(number[number.length - 1 - index])
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2
    sum += digit
  }
  return sum % 10 === 0
}

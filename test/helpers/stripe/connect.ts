// Stripe Connect as docs.stripe.com/connect describes it for a platform: connected accounts (acct_…), made with
// POST /v1/accounts, each with its own objects, balance, payouts and events; a request made on one carries the
// Stripe-Account header (docs.stripe.com/connect/authentication), and an idempotency key is the account's own. A
// header naming an account the platform has no access to is refused (docs.stripe.com/error-codes: account_invalid).
import type Stripe from 'stripe'
import { noSuch, StripeFailure } from './errors.js'
import { type Form, stringParam } from './form.js'
import { stripeId, unixNow } from './ids.js'
import type { StripeLedger } from './ledger.js'
import type { Answer } from './lists.js'

export class ConnectedAccounts {
  readonly ledgers = new Map<string, StripeLedger>()
  readonly accounts = new Map<string, Stripe.Account>()

  constructor(private readonly newLedger: (account: string) => StripeLedger) {}

  /** POST /v1/accounts: a connected account (type custom, express or standard), ready to charge and pay out. */
  create(form: Form): Answer<Stripe.Account> {
    const type = (stringParam(form, 'type') ?? 'custom') as Stripe.Account.Type
    const id = stripeId('acct')
    const account = {
      id,
      object: 'account',
      type,
      business_profile: null,
      capabilities: { card_payments: 'active', transfers: 'active' },
      charges_enabled: true,
      payouts_enabled: true,
      details_submitted: true,
      country: stringParam(form, 'country') ?? 'US',
      default_currency: 'usd',
      created: unixNow(),
      email: stringParam(form, 'email') ?? null,
      metadata: {},
      settings: null,
    } as unknown as Stripe.Account
    this.accounts.set(id, account)
    this.ledgers.set(id, this.newLedger(id))
    return { status: 200, body: account }
  }

  retrieve(id: string): Answer<Stripe.Account> {
    const account = this.accounts.get(id)
    if (!account) throw noSuch('account', id)
    return { status: 200, body: account }
  }

  /** The ledger a request with `Stripe-Account: account` acts on, or Stripe's refusal naming the account. */
  ledgerOf(account: string, secretKey: string): StripeLedger {
    const ledger = this.ledgers.get(account)
    if (ledger) return ledger
    throw new StripeFailure(403, {
      type: 'invalid_request_error',
      code: 'account_invalid',
      message:
        `The provided key '${secretKey.slice(0, 8)}${'*'.repeat(4)}${secretKey.slice(-4)}' does not have access to ` +
        `account '${account}' (or that account does not exist). Application access may have been revoked.`,
    })
  }
}

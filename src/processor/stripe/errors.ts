// Stripe's errors as the boundary's, one branch per error type Stripe documents (docs.stripe.com/api/errors,
// docs.stripe.com/error-handling). A decline is not an error at the boundary: the processor turns a
// StripeCardError into a failed charge (stripe.ts declined). A forker adding Adyen writes this table for Adyen's.
import Stripe from 'stripe'
import { ProcessorIdempotencyError, ProcessorRequestError, ProcessorUnavailableError } from '../processor.js'

export function toBoundaryError(error: unknown): unknown {
  if (!(error instanceof Stripe.errors.StripeError)) return error
  switch (error.type) {
    // card_error outside a charge (a charge turns it into its failed outcome): the card refused the operation.
    case 'StripeCardError':
      return new ProcessorRequestError(undefined, error.decline_code ?? error.code ?? 'card_declined', error.message)
    // No answer at all (a timeout, a refused or reset connection, an attempt cut at the call's deadline): the
    // request may or may not have been acted on.
    case 'StripeConnectionError':
    // api_error: "something went wrong on Stripe's end" (a 5xx, or a 409 the SDK's retries did not get past).
    case 'StripeAPIError':
    // rate_limit_error (429): too many requests hit the API too quickly; nothing was done.
    case 'StripeRateLimitError':
      return new ProcessorUnavailableError(`Stripe did not act or did not answer: ${error.message}`)
    // idempotency_error: the key was first used with other parameters, or on another endpoint.
    case 'StripeIdempotencyError':
      return new ProcessorIdempotencyError(
        `Stripe refused the operation id as already used with other parameters: ${error.message}`,
      )
    // authentication_error (401) and permission_error (403): the service's own key is wrong or lacks a right;
    // nothing was done, and the operator must act (the 503 says so to clients; the log has the cause).
    case 'StripeAuthenticationError':
    case 'StripePermissionError':
      return new ProcessorUnavailableError(`Stripe refused the service's API key: ${error.message}`)
    // invalid_request_error: the request has invalid parameters, or the object is in no state for it.
    case 'StripeInvalidRequestError':
      return invalidRequest(error)
    default:
      return new ProcessorUnavailableError(
        `Stripe answered an error this service does not know (${error.type}): ${error.message}`,
      )
  }
}

function invalidRequest(error: Stripe.errors.StripeError): Error {
  const code = error.code ?? 'invalid_request'
  // idempotency_key_in_use (409): the first request under this key is still executing; its outcome is unknown.
  if (code === 'idempotency_key_in_use' || error.statusCode === 409)
    return new ProcessorUnavailableError(`Stripe is still executing this operation: ${error.message}`)
  // resource_missing on payment_method, payment_method_unactivated, payment_method_invalid_parameter, ...
  if (error.param === 'payment_method' || code.startsWith('payment_method_'))
    return new ProcessorRequestError('source', code, error.message)
  if (error.param === 'amount' || code === 'amount_too_small' || code === 'amount_too_large')
    return new ProcessorRequestError('amount_cents', code, error.message)
  if (error.param === 'currency') return new ProcessorRequestError('currency', code, error.message)
  if (error.param === 'return_url') return new ProcessorRequestError('return_url', code, error.message)
  if (error.param?.startsWith('mandate_data')) return new ProcessorRequestError('mandate', code, error.message)
  // payment_intent_unexpected_state, charge_already_refunded, ...: the payment at Stripe is in no state for this.
  return new ProcessorRequestError(undefined, code, error.message)
}

// Stripe's error answers (docs.stripe.com/api/errors): an HTTP status and {"error": {type, code, message, param, ...}}.
import type Stripe from 'stripe'

export class StripeFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: Stripe.StripeRawError,
  ) {
    super(error.message)
  }
}

/** 400 invalid_request_error: a parameter is missing or wrong. */
export function invalidRequest(message: string, param?: string, code?: string): StripeFailure {
  return new StripeFailure(400, {
    type: 'invalid_request_error',
    message,
    ...(param && { param }),
    ...(code && { code }),
  })
}

/** 404 resource_missing: docs.stripe.com/error-codes#resource-missing. */
export function noSuch(what: string, id: string, param?: string): StripeFailure {
  return new StripeFailure(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    message: `No such ${what}: '${id}'`,
    ...(param && { param }),
  })
}

/** 400 payment_intent_unexpected_state: the PaymentIntent's status does not allow the action. */
export function unexpectedState(intent: Stripe.PaymentIntent, action: string): StripeFailure {
  return new StripeFailure(400, {
    type: 'invalid_request_error',
    code: 'payment_intent_unexpected_state',
    message: `This PaymentIntent's ${action} could not be performed because it has a status of ${intent.status}.`,
    payment_intent: intent,
  })
}

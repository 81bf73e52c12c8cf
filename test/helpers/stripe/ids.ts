// Stripe-like ids and times, for every object the test server makes.
import { randomBytes } from 'node:crypto'

/** Stripe-like ids: a prefix and 24 random characters. */
export function stripeId(prefix: string): string {
  return `${prefix}_${randomBytes(18).toString('base64url').replace(/[-_]/g, 'x').slice(0, 24)}`
}

export function unixNow(): number {
  return Math.floor(Date.now() / 1000)
}

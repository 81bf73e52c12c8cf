// The extension point for settling unknown outcomes. A route whose work calls something outside the service
// (a processor, a bank) names its Recovery where it declares idempotency (config: { idempotency: { recovery } }),
// and its claims record that Recovery's name; the recovery worker runs the Recoveries of src/recovery/registry.ts,
// found by that name. When a request is abandoned (its holder crashed, or its lease ended after the call), the
// worker asks downstream what happened under the claim's operation id and records it exactly as a live request
// would have. The idempotency plugin uses the same Recovery to give back what a request reserved when it lets go
// of its key before anything went downstream. Neither the route's path nor its documentation decides any of it.
import type { PlatformPricing } from '../accounts/platform-pricing.js'
import type { Transaction } from '../db/connect.js'
import type { RouteResponse } from './response.js'

/** The graphile-worker task that settles abandoned claims (src/recovery/recover-abandoned-claims.ts). */
export const RECOVER_TASK = 'recover_abandoned_claims'

/** One request's operation: what it reserved before calling out is found by these. */
export interface ClaimedOperation {
  operationId: string
  accountId: string
  /**
   * The name of the route's Recovery, the validated path parameters and body the request was claimed with, and the
   * processor account its calls went to (Keyed.processorAccount; null in a claim made before there were any), with
   * the platform's pricing there when the account had one (its fee is sent again as first sent).
   */
  request: {
    recovery: string
    params: unknown
    body: unknown
    processorAccount: string | null
    platformPricing?: PlatformPricing
  }
}

/** An abandoned claim, as the recovery worker holds it: fenced by its own token. */
export interface AbandonedClaim extends ClaimedOperation {
  rowId: string
  token: string
  endpoint: string
  key: string
  /** When the key was claimed: no call under its operation id went out before (a bound for lookups by time). */
  createdAt: Date
}

export interface Recovery<Found = unknown> {
  /**
   * What a claim records to find this Recovery again: one name per Recovery of the service. It outlives a deploy
   * (a claim made before one is settled by the Recovery of its name after it), so a Recovery keeps its name when
   * its route's path changes.
   */
  name: string
  /** Asks downstream what it did under the claim's operation id: its record, or undefined if it never saw it. */
  lookup(claim: AbandonedClaim): Promise<Found | undefined>
  /** Records what downstream did, in the transaction that completes the key; returns the request's response. */
  record(tx: Transaction, claim: AbandonedClaim, found: Found): Promise<RouteResponse>
  /**
   * Gives back what the request reserved before calling out, when downstream never saw the operation. It runs in
   * the transaction that deletes the key, and only if that delete found the key still held by the caller's token:
   * a holder that lost its claim must not give back what its successor is using.
   */
  release?(tx: Transaction, operation: ClaimedOperation): Promise<void>
}

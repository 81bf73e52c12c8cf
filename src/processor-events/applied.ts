// What applying one change of the processor's did, for the inbox (inbox.ts) to record: applied, waiting for what it
// needs, or ignored; and the metrics it counts once committed. Shared by every kind of change (apply.ts, payouts.ts).

/**
 * `note`: why it waits or was ignored; for one applied, what an operator should know (a balance overdrawn).
 * `afterCommit`: the metrics it counts, once its transaction has committed (counted inside it, an attempt that
 * rolled back, or a webhook answered 500 and delivered again, would count twice).
 */
export type Applied = { afterCommit?: (() => void)[] } & (
  | { status: 'applied'; note?: string }
  | { status: 'waiting' | 'ignored'; note: string }
)

export const APPLIED: Applied = { status: 'applied' }
export const waiting = (note: string): Applied => ({ status: 'waiting', note })
export const ignored = (note: string): Applied => ({ status: 'ignored', note })

/**
 * Where an event happened: the processor account it names (null: the platform's own), and the account linked to it,
 * read once for the whole event (inbox.ts) and passed to what needs it (a connected account's payout).
 */
export interface EventOrigin {
  processorAccount: string | null
  linkedAccount: string | undefined
}

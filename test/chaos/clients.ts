// Clients that use the API as docs/client.md says: the shipped client, one Idempotency-Key per logical operation
// held still across every retry (the client's own, and the caller's after the client gave up), until the API
// gives an answer a retry cannot change. Some give up after one attempt and never come back, as a crashed
// client does: the service must settle what they left. Every attempt is recorded in the history, with what was
// sent, when, and what came back, or that nothing did.
import { randomUUID } from 'node:crypto'
import { createClient, ProblemError, type PaymentsClient } from '../../src/client/index.js'
import type { Random } from './random.js'

export type OperationKind = 'charge' | 'authorize' | 'capture' | 'void' | 'refund'

export interface Attempt {
  method: string
  path: string
  key: string | undefined
  body: string | undefined
  sentAt: number
  answeredAt?: number
  status?: number
  text?: string
  retryAfter?: string | null
  replayed?: boolean
  /** No answer: why (refused, reset, timed out). */
  error?: string
}

export interface Operation {
  id: number
  stack: string
  client: number
  kind: OperationKind
  key: string
  startedAt: number
  endedAt?: number
  /** final: the API gave an answer a retry cannot change; gave-up: the client left after one attempt. */
  end?: 'final' | 'gave-up' | 'unsettled'
  /** The final answer's status and bytes. */
  status?: number
  text?: string
  attempts: Attempt[]
}

export interface ClientRun {
  operations: Operation[]
  /** Stops starting operations; those under way go on (with their keys) until final, or `settleMs` passed. */
  stop(settleMs: number): Promise<void>
}

export interface ClientSetup {
  stack: string
  baseUrl: string
  apiKey: string
  clients: number
  /** Payment methods this processor knows: those that succeed, decline, and (simulated) act up. */
  sources: { succeed: string[]; decline: string[]; actUp: string[]; downForGood: string[] }
}

export function startClients(setup: ClientSetup, random: Random): ClientRun {
  const operations: Operation[] = []
  let stopping = false
  let hardStopAt = Infinity

  const clientFor = (operation: Operation, attempts: number | undefined): PaymentsClient =>
    createClient({
      baseUrl: setup.baseUrl,
      apiKey: setup.apiKey,
      fetch: recording(operation),
      retry: attempts === undefined ? {} : { maxAttempts: attempts },
    })

  /** Runs one logical operation to its final answer, calling again with its key whenever the client gives up. */
  const perform = async (
    client: number,
    kind: OperationKind,
    call: (api: PaymentsClient, key: string) => Promise<unknown>,
    giveUp = false,
  ): Promise<Operation> => {
    const operation: Operation = {
      id: operations.length,
      stack: setup.stack,
      client,
      kind,
      key: randomUUID(),
      startedAt: Date.now(),
      attempts: [],
    }
    operations.push(operation)
    for (;;) {
      try {
        await call(clientFor(operation, giveUp ? 1 : undefined), operation.key)
        return finish(operation, 'final')
      } catch (error) {
        const final = error instanceof ProblemError && !retryableProblem(error)
        if (final) return finish(operation, 'final')
        if (giveUp) return finish(operation, 'gave-up')
        if (Date.now() > hardStopAt) return finish(operation, 'unsettled')
        await sleep(500)
      }
    }
  }

  const client = async (index: number) => {
    const choose = random.fork()
    while (!stopping) {
      const amount = choose.int(100, 50_000)
      const flow = choose.next()
      if (flow < 0.15) {
        // Sends once and is gone, whatever came back.
        const source = choose.pick([...setup.sources.succeed, ...setup.sources.actUp, ...setup.sources.downForGood])
        await perform(
          index,
          'charge',
          (api, key) => api.charges.create({ amount_cents: amount, currency: 'usd', source }, { idempotencyKey: key }),
          true,
        )
        continue
      }
      const source = choose.chance(0.25)
        ? choose.pick([...setup.sources.decline, ...setup.sources.actUp])
        : choose.pick(setup.sources.succeed)
      const capture = flow >= 0.6
      const created = await perform(index, capture ? 'charge' : 'authorize', (api, key) =>
        api.charges.create({ amount_cents: amount, currency: 'usd', source, capture }, { idempotencyKey: key }),
      )
      const charge = created.status === 201 ? (JSON.parse(created.text!) as { id: string; status: string }) : undefined
      if (charge?.status === 'succeeded' && choose.chance(0.4)) {
        const refund = choose.int(1, Math.max(1, Math.floor(amount / 2)))
        await perform(index, 'refund', (api, key) =>
          api.refunds.create(charge.id, { amount_cents: refund }, { idempotencyKey: key }),
        )
      } else if (charge?.status === 'requires_capture') {
        if (choose.chance(0.6)) {
          const part = choose.chance(0.5) ? { amount_cents: choose.int(1, amount) } : {}
          await perform(index, 'capture', (api, key) => api.charges.capture(charge.id, part, { idempotencyKey: key }))
        } else {
          await perform(index, 'void', (api, key) => api.charges.void(charge.id, { idempotencyKey: key }))
        }
      }
    }
  }
  const running = Promise.all(Array.from({ length: setup.clients }, (_, index) => client(index)))

  return {
    operations,
    stop: async (settleMs) => {
      stopping = true
      hardStopAt = Date.now() + settleMs
      await running
    },
  }
}

/** Conflicts that another attempt under the same key resolves; the client's own policy retries them too. */
function retryableProblem(error: ProblemError): boolean {
  return (
    error.status === 408 ||
    error.status === 429 ||
    error.status >= 500 ||
    error.is('idempotency-request-in-flight') ||
    error.is('charge-operation-in-progress')
  )
}

function finish(operation: Operation, end: NonNullable<Operation['end']>): Operation {
  operation.end = end
  operation.endedAt = Date.now()
  const answered = operation.attempts.filter((attempt) => attempt.status !== undefined)
  const last = answered.at(-1)
  if (end === 'final' && last) {
    operation.status = last.status
    operation.text = last.text
  }
  return operation
}

/** fetch, recording each attempt of `operation` in the history. */
function recording(operation: Operation): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input))
    const headers = new Headers(init?.headers)
    const attempt: Attempt = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      key: headers.get('idempotency-key') ?? undefined,
      body: typeof init?.body === 'string' ? init.body : undefined,
      sentAt: Date.now(),
    }
    operation.attempts.push(attempt)
    try {
      const response = await fetch(input, init)
      attempt.text = await response.clone().text()
      attempt.status = response.status
      attempt.retryAfter = response.headers.get('retry-after')
      attempt.replayed = response.headers.get('idempotent-replayed') === 'true'
      return response
    } catch (error) {
      attempt.error = String((error as Error).cause ?? error)
      throw error
    } finally {
      attempt.answeredAt = Date.now()
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

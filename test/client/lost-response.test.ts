// The story this service exists for, end to end over real sockets: the answer to a charge is lost on its way
// back, the client retries, and the customer is charged once, by the shipped client; twice by a client that
// makes a new key per attempt. And a retry that arrives while the first request is still at the processor. With each
// processor: the simulated one, and Stripe's test server through the SDK.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createClient } from 'payments-api/client'
import { startLossyProxy, type LossyProxy } from '../../scripts/demo/lossy-proxy.js'
import { naiveCreateCharge } from '../../scripts/demo/naive-client.js'
import { chargeBody, controllableProcessor, countCharges, useTestApp } from '../helpers/app.js'
import { runNpmScript } from '../helpers/processes.js'
import { PROCESSORS, useProcessor } from '../helpers/processors.js'
import { until } from '../helpers/system.js'

describe.each(PROCESSORS)('with the $name processor', ({ name }) => {
  const under = useProcessor(name)
  const processor = controllableProcessor(under.factory)
  const suite = useTestApp({ processor: processor.factory })
  let api: string
  let proxy: LossyProxy

  beforeAll(async () => {
    api = await suite.context.app.listen({ port: 0, host: '127.0.0.1' })
    proxy = await startLossyProxy(api)
  })
  afterAll(() => proxy.close())

  /** The account's charges at the processor itself. */
  const ledgerCharges = async (accountId: string) => (await under.ledgerOf(suite.context.sql, accountId)).charges

  describe('a lost response', () => {
    it('when the answer to a charge is lost, then the client retries with the same key and bytes, gets the same charge replayed, and the customer is charged once', async () => {
      const user = await suite.context.newAccount()
      const client = createClient({ baseUrl: proxy.url, apiKey: user.apiKey, retry: { baseDelayMs: 10 } })
      proxy.log.length = 0
      proxy.dropNext(1)

      const result = await client.charges.create(chargeBody({ description: 'order 1001' }))

      expect(result).toMatchObject({ status: 201, replayed: true, attempts: 2 })
      const body = JSON.stringify(chargeBody({ description: 'order 1001' }))
      expect(
        proxy.log.map(({ status, dropped, idempotencyKey, body }) => ({ status, dropped, idempotencyKey, body })),
      ).toEqual([
        { status: 201, dropped: true, idempotencyKey: result.idempotencyKey, body },
        { status: 201, dropped: false, idempotencyKey: result.idempotencyKey, body },
      ])
      const rows = await suite.context.sql`select id from charges where account_id = ${user.id}`
      expect(rows.map((row) => row.id)).toEqual([result.data.id])
      expect(await ledgerCharges(user.id)).toBe(1)
    })

    it('when the same answer is lost to the shipped client and to a client that makes a new key per attempt, then one charges once and the other twice', async () => {
      const charged: Record<string, { charges: number; processorCharges: number; attempts: number }> = {}
      for (const which of ['shipped client', 'new key per attempt'] as const) {
        const user = await suite.context.newAccount()
        proxy.dropNext(1)
        const { attempts } =
          which === 'shipped client'
            ? await createClient({
                baseUrl: proxy.url,
                apiKey: user.apiKey,
                retry: { baseDelayMs: 10 },
              }).charges.create(chargeBody())
            : await naiveCreateCharge(proxy.url, user.apiKey, chargeBody())
        charged[which] = {
          charges: await countCharges(suite.context.sql, user.id),
          processorCharges: await ledgerCharges(user.id),
          attempts,
        }
      }
      expect(charged).toEqual({
        'shipped client': { charges: 1, processorCharges: 1, attempts: 2 },
        'new key per attempt': { charges: 2, processorCharges: 2, attempts: 2 },
      })
    })

    it('when a retry arrives while the first request is still at the processor, then it is answered 409, waits for Retry-After, and replays the one charge', async () => {
      const user = await suite.context.newAccount()
      const client = createClient({ baseUrl: proxy.url, apiKey: user.apiKey })
      const key = `order-1002-${Date.now()}`
      proxy.log.length = 0
      const callsBefore = processor.calls.length
      const release = processor.holdNext()
      const first = client.charges.create(chargeBody(), { idempotencyKey: key })
      await until(async () => processor.calls.length > callsBefore) // the first request is at the processor, held there
      const second = client.charges.create(chargeBody(), { idempotencyKey: key })
      await until(async () => proxy.log.some((entry) => entry.status === 409))
      const heldSince = Date.now()
      release()

      const [original, retried] = await Promise.all([first, second])
      expect(original).toMatchObject({ replayed: false, attempts: 1 })
      expect(retried).toMatchObject({ replayed: true, attempts: 2 })
      expect(retried.data).toEqual(original.data)
      expect(Date.now() - heldSince).toBeGreaterThanOrEqual(900) // Retry-After: 1, not a tight loop
      expect(proxy.log.map((entry) => entry.status)).toEqual([409, 201, 201])
      expect(await countCharges(suite.context.sql, user.id)).toBe(1)
    })

    it('when npm run demo:lost-response plays the story against a server on the PORT it was started with, then it shows one charge for the shipped client and two for the other', async () => {
      const user = await suite.context.newAccount()
      const { code, stdout, stderr } = await runNpmScript(['demo:lost-response'], {
        PORT: new URL(api).port,
        PAYMENTS_API_KEY: user.apiKey,
      })
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      expect(stdout).toContain('charges for order 1: 1')
      expect(stdout).toContain('charges for order 2: 2')
      expect(stdout).toMatch(
        new RegExp(
          String.raw`attempt 1: POST /v1/charges {2}Idempotency-Key: (\S+) {2}-> 201, answer lost on the way back\n` +
            String.raw` {3}attempt 2: POST /v1/charges {2}Idempotency-Key: \1 {2}-> 201\n`,
        ),
      )
      expect(await countCharges(suite.context.sql, user.id)).toBe(3)
    }, 30_000)
  })
})

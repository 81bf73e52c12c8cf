// One rule for every POST whose body is optional (capture, void, redeliver, rotate_secret): no body, or an empty
// one, means {}; anything sent must be a JSON object its schema accepts.
import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp, type TestAccount } from '../helpers/app.js'

const suite = useTestApp({ config: { WEBHOOK_ALLOW_PRIVATE_URLS: true } })

async function fixtures(user: TestAccount) {
  const endpoint = (
    await user.post('/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'] })
  ).json()
  const authorization = (await user.post('/v1/charges', chargeBody({ capture: false }))).json()
  const [event] = await suite.context.sql<{ id: string }[]>`select id from events where account_id = ${user.id} limit 1`
  return {
    rotate_secret: `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`,
    redeliver: `/v1/events/${event!.id}/redeliver`,
    void: `/v1/charges/${authorization.id}/void`,
  }
}

/** A POST with exactly these body bytes (none at all when undefined), with or without a JSON content type. */
const postRaw = (user: TestAccount, url: string, payload: string | undefined, contentType = true) =>
  suite.context.app.inject({
    method: 'POST',
    url,
    headers: {
      authorization: `Bearer ${user.apiKey}`,
      'idempotency-key': crypto.randomUUID(),
      ...(contentType && { 'content-type': 'application/json' }),
    },
    ...(payload !== undefined && { payload }),
  })

describe('POSTs whose body is optional', () => {
  it.each(['{"x":42}', '[1,2]', '"s"', 'null', '42'])(
    'when the body is %s, then every one of them answers 400 validation-failed',
    async (payload) => {
      const user = await suite.context.newAccount()
      for (const [name, url] of Object.entries(await fixtures(user))) {
        const response = await postRaw(user, url, payload)
        expect(response.statusCode, `${name} ${payload}`).toBe(400)
        expect(response.json().type, name).toMatch(/\/validation-failed$/)
      }
    },
  )

  it.each([
    ['no body and no content type', undefined, false],
    ['an empty body with a JSON content type', '', true],
    ['{}', '{}', true],
  ])('when sent with %s, then every one of them succeeds', async (_case, payload, contentType) => {
    const user = await suite.context.newAccount()
    const urls = await fixtures(user)
    expect((await postRaw(user, urls.rotate_secret, payload, contentType)).statusCode).toBe(200)
    expect((await postRaw(user, urls.redeliver, payload, contentType)).statusCode).toBe(202)
    expect((await postRaw(user, urls.void, payload, contentType)).statusCode).toBe(200)
  })
})

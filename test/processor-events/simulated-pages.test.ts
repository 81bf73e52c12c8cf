// The simulated processor's own pages, as a developer meets them with `npm start`: the 3-D Secure page a charge's
// next_action names (a form a browser posts, then goes back to the return_url), and the controls that refuse what
// the payment is in no state for. The processor's webhook endpoint says the simulated one sends none.
import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'

const suite = useTestApp()
const RETURN_URL = 'https://shop.example/orders/7/paid'

describe('the simulated processor’s pages', () => {
  it('when the customer opens the page next_action names and completes it, then the browser goes back to the return_url and the charge succeeded', async () => {
    const charge = (
      await suite.account.post(
        '/v1/charges',
        chargeBody({ source: 'pm_card_threeDSecure2Required', return_url: RETURN_URL }),
      )
    ).json()
    const path = new URL(charge.next_action.url).pathname
    const page = await suite.context.app.inject({ method: 'GET', url: path })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.body).toContain('asks the customer to authenticate')
    expect(page.body).toContain('Complete authentication')
    const completed = await suite.context.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'result=succeeded',
    })
    expect(completed.statusCode).toBe(303)
    expect(completed.headers.location).toBe(RETURN_URL)
    expect((await suite.account.get(`/v1/charges/${charge.id}`)).json()).toMatchObject({
      status: 'succeeded',
      next_action: null,
    })
    // Once more: nothing to authenticate.
    const again = await suite.context.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'result=succeeded',
    })
    expect(again.statusCode).toBe(409)
    expect(again.json()).toMatchObject({ status: 409, detail: expect.stringContaining('nothing to authenticate') })
  })

  it('when a control is asked of a payment in no state for it, then 409 says why; of no payment, 404', async () => {
    const card = (await suite.account.post('/v1/charges', chargeBody())).json()
    const settle = await suite.context.app.inject({
      method: 'POST',
      url: `/simulated-processor/payments/${card.processor_reference}/settle`,
    })
    expect(settle.statusCode).toBe(409)
    expect(settle.json().detail).toContain('nothing to settle')
    const missing = await suite.context.app.inject({
      method: 'GET',
      url: '/simulated-processor/authenticate/sim_ch_000000000000000000000000',
    })
    expect(missing.statusCode).toBe(404)
    const stays = (
      await suite.account.post(
        '/v1/charges',
        chargeBody({
          source: 'pm_usBankAccount_processing',
          mandate: { ip_address: '203.0.113.7', user_agent: 'test' },
        }),
      )
    ).json()
    const never = await suite.context.app.inject({
      method: 'POST',
      url: `/simulated-processor/payments/${stays.processor_reference}/settle`,
    })
    expect(never.json().detail).toContain('stays processing')
  })

  it('when something posts to the processor’s webhook endpoint, then 404 processor-sends-no-webhooks: its events are read from its list', async () => {
    const response = await suite.context.app.inject({
      method: 'POST',
      url: '/processor/webhooks',
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toMatchObject({ type: expect.stringMatching(/processor-sends-no-webhooks$/) })
  })
})

// Webhook URLs: https only, never to loopback, private, link-local or metadata addresses (unless the deployment
// allows it, for development).
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { webhookUrlProblem } from '../../src/webhooks/urls.js'

const suite = useTestApp()

describe('webhook URLs', () => {
  it.each([
    ['http://example.com/hooks', 'must use https'],
    ['https://127.0.0.1/hooks', 'loopback, private or link-local'],
    ['https://localhost/hooks', 'loopback, private or link-local'],
    ['https://10.1.2.3/hooks', 'loopback, private or link-local'],
    ['https://169.254.169.254/latest/meta-data', 'loopback, private or link-local'],
    ['https://[::1]/hooks', 'loopback, private or link-local'],
    ['https://user:pass@example.com/hooks', 'must not carry credentials'],
    ['not a url', 'is not a URL'],
  ])('when the url is %s, then the endpoint is refused with 400 webhook-url-refused', async (url, reason) => {
    const response = await suite.account.post('/v1/webhook_endpoints', { url, enabled_events: ['*'] })
    expect(response.statusCode).toBe(400)
    expect(response.json().type).toMatch(/\/webhook-url-refused$/)
    expect(response.json().detail).toContain(reason)
  })

  it('when the address is public, then it is allowed, and development may allow private ones', async () => {
    expect(await webhookUrlProblem('https://93.184.215.14/hooks', false)).toBeUndefined()
    expect(await webhookUrlProblem('http://127.0.0.1:4000/hooks', true)).toBeUndefined()
  })
})

// Webhook URLs: https only, never to loopback, private, link-local or metadata addresses (unless the deployment
// allows it, for development).
import { describe, expect, it } from 'vitest'
import { useTestApp } from '../helpers/app.js'
import { createServer } from 'node:http'
import { sendToTarget } from '../../src/webhooks/send.js'
import { webhookTarget, webhookUrlProblem, type Resolver } from '../../src/webhooks/urls.js'

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
  ])('when the url is %s, then the endpoint is refused with 400 webhook-url-refused', async (url, reason) => {
    const response = await suite.account.post('/v1/webhook_endpoints', { url, enabled_events: ['*'] })
    expect(response.statusCode).toBe(400)
    expect(response.json().type).toMatch(/\/webhook-url-refused$/)
    expect(response.json().detail).toContain(reason)
    // Every refusal development may lift names the setting that lifts it.
    if (reason !== 'must not carry credentials')
      expect(response.json().detail).toContain('WEBHOOK_ALLOW_PRIVATE_URLS=true')
  })

  it('when the url is not a URL at all, then it is refused by its schema (format uri), naming url', async () => {
    const response = await suite.account.post('/v1/webhook_endpoints', { url: 'not a url', enabled_events: ['*'] })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({
      type: expect.stringMatching(/\/validation-failed$/),
      errors: [{ location: 'body/url' }],
    })
    expect(await webhookUrlProblem('not a url', false)).toContain('is not a URL')
  })

  it('when the address is public, then it is allowed, and development may allow private ones', async () => {
    expect(await webhookUrlProblem('https://93.184.215.14/hooks', false)).toBeUndefined()
    expect(await webhookUrlProblem('http://127.0.0.1:4000/hooks', true)).toBeUndefined()
  })
})

describe('DNS rebinding: the address checked is the address connected to', () => {
  it('when a resolver answers a public address, then a private one, then the target is the first answer and DNS is asked once', async () => {
    const answers = ['93.184.215.14', '127.0.0.1']
    const asked: string[] = []
    const rebinding: Resolver = async (host) => {
      asked.push(host)
      return [{ address: answers[asked.length - 1]!, family: 4 }]
    }
    const target = await webhookTarget('https://hooks.example.test/in', false, rebinding)
    expect(target).toMatchObject({ address: '93.184.215.14', family: 4 })
    expect(asked).toEqual(['hooks.example.test'])
    // Asked again (the next attempt), the private answer is refused.
    expect(await webhookTarget('https://hooks.example.test/in', false, rebinding)).toEqual({
      problem: expect.stringMatching(/^resolves to 127\.0\.0\.1, a loopback, private or link-local address/),
    })
  })

  it('when a delivery is sent, then it goes to the checked address without resolving the host again, and Host names the host', async () => {
    const received: { host?: string; body: string }[] = []
    const server = createServer((request, response) => {
      let body = ''
      request
        .on('data', (chunk) => (body += chunk))
        .on('end', () => {
          received.push({ host: request.headers.host, body })
          response.writeHead(204).end()
        })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      // hooks.example.test resolves nowhere: only the pinned address can be reached.
      const target = { url: new URL(`http://hooks.example.test:${port}/in`), address: '127.0.0.1', family: 4 as const }
      const sent = await sendToTarget(target, { 'content-type': 'application/json' }, '{"a":1}', {
        timeoutMs: 5000,
        excerptChars: 100,
      })
      expect(sent.status).toBe(204)
      expect(received).toEqual([{ host: `hooks.example.test:${port}`, body: '{"a":1}' }])
    } finally {
      server.close()
    }
  })
})

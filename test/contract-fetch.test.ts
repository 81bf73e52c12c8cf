// The outside contract check (test/helpers/contract.ts contractFetch) that covers child-process servers: it must
// find what is wrong, or the tests that rely on it prove nothing.
import { createServer } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { contractFetch, routeOf } from './helpers/contract.js'

let url: string
const server = createServer((request, response) => {
  if (request.url === '/v1/charges')
    return response.writeHead(200, { 'content-type': 'application/json' }).end('{"nope":1}')
  response.writeHead(418, { 'content-type': 'text/plain' }).end('teapot')
})
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

describe('the contract, checked from outside', () => {
  it('when a path is an instance of an operation, then its route is found', () => {
    expect(routeOf('/v1/charges/ch_0123456789abcdef01234567/refunds')).toBe('/v1/charges/:id/refunds')
    expect(routeOf('/v1/nothing')).toBeUndefined()
  })

  it('when a response breaks the document, then each is reported, and the response is still readable', async () => {
    const violations: string[] = []
    const checked = contractFetch(violations)
    expect(await (await checked(`${url}/v1/charges`)).json()).toEqual({ nope: 1 })
    await checked(`${url}/v1/charges/ch_0123456789abcdef01234567`, { method: 'GET' })
    expect(violations).toEqual([
      expect.stringContaining('GET /v1/charges 200: '),
      expect.stringContaining('GET /v1/charges/{id} 418: status 418 is not documented'),
    ])
  })
})

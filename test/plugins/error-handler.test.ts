// Database failures a client may retry are told apart: a lost race (deadlock, serialization failure) is not an
// outage, and neither says "with the same Idempotency-Key" to a request that had none.
import Fastify from 'fastify'
import { describe, expect, it } from 'vitest'
import errorHandler from '../../src/plugins/error-handler.js'

async function answerTo(error: unknown) {
  const app = Fastify()
  await app.register(errorHandler)
  app.delete('/thing', async () => {
    throw error
  })
  const response = await app.inject({ method: 'DELETE', url: '/thing' })
  await app.close()
  return response
}

describe('the error handler', () => {
  it('when a transaction loses a deadlock, then 503 concurrent-update with Retry-After, not "the database is unavailable"', async () => {
    const response = await answerTo(Object.assign(new Error('deadlock detected'), { code: '40P01' }))
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('1')
    expect(response.json()).toMatchObject({ type: expect.stringMatching(/\/concurrent-update$/), status: 503 })
    expect(response.json().detail).not.toContain('unavailable')
  })

  it('when the database is unreachable, then 503 service-unavailable', async () => {
    const response = await answerTo(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))
    expect(response.json()).toMatchObject({ type: expect.stringMatching(/\/service-unavailable$/), status: 503 })
  })
})

import { describe, expect, it } from 'vitest'
import { requestFingerprint } from '../../src/idempotency/fingerprint.js'
import { canonicalJson } from '../../src/schemas/canonical-json.js'

const request = (body: unknown, overrides: Partial<{ method: string; route: string; params: unknown }> = {}) =>
  requestFingerprint({ method: 'POST', route: '/v1/charges', params: {}, body, ...overrides })

describe('canonicalJson', () => {
  it('when objects nest, then keys are sorted at every depth and arrays keep their order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    )
  })

  it('when strings need escaping, then they are escaped as JSON', () => {
    expect(canonicalJson({ 'k"': 'line\nbreak' })).toBe('{"k\\"":"line\\nbreak"}')
  })
})

describe('requestFingerprint', () => {
  it('when only key order differs, then the fingerprints are equal', () => {
    expect(
      request({ amount_cents: 100, currency: 'usd' }).equals(request({ currency: 'usd', amount_cents: 100 })),
    ).toBe(true)
  })

  it('when a value differs, then the fingerprints differ', () => {
    expect(request({ amount_cents: 100 }).equals(request({ amount_cents: 101 }))).toBe(false)
  })

  it('when the route, method or path parameters differ, then the fingerprints differ', () => {
    const base = request({}, { route: '/v1/charges/:id/refunds', params: { id: 'ch_a' } })
    expect(base.equals(request({}, { route: '/v1/charges/:id/refunds', params: { id: 'ch_b' } }))).toBe(false)
    expect(base.equals(request({}, { route: '/v1/other/:id', params: { id: 'ch_a' } }))).toBe(false)
    expect(base.equals(request({}, { method: 'PUT', route: '/v1/charges/:id/refunds', params: { id: 'ch_a' } }))).toBe(
      false,
    )
  })

  it('is a 32-byte SHA-256 digest', () => {
    expect(request({})).toHaveLength(32)
  })
})

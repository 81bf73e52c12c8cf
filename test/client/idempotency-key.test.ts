import { describe, expect, it } from 'vitest'
import { idempotencyKey } from 'payments-api/client'
import { parseIdempotencyKey } from '../../src/idempotency/key.js'

describe('idempotencyKey', () => {
  it('when derived from the same facts, then the key is the same, readable, and one the server accepts', () => {
    const key = idempotencyKey.derive('charge', 'inv_123', 'attempt', 1)
    expect(key).toBe('charge:inv_123:attempt:1')
    expect(idempotencyKey.derive('charge', 'inv_123', 'attempt', 1)).toBe(key)
    expect(parseIdempotencyKey(key)).toBe(key)
  })

  it('when parts hold separators or other characters, then they are encoded, so distinct parts never make the same key', () => {
    expect(idempotencyKey.derive('a:b', 'c')).not.toBe(idempotencyKey.derive('a', 'b:c'))
    expect(idempotencyKey.derive('a%3Ab')).not.toBe(idempotencyKey.derive('a:b'))
    const key = idempotencyKey.derive('invoice', 'Facture n°7 (été)')
    expect(key).toBe('invoice:Facture%20n%C2%B07%20%28%C3%A9t%C3%A9%29')
    expect(parseIdempotencyKey(key)).toBe(key)
  })

  it('when a part is empty or not an integer, or the key would be too long, then derive throws', () => {
    expect(() => idempotencyKey.derive()).toThrow(TypeError)
    expect(() => idempotencyKey.derive('charge', '')).toThrow(/empty/)
    expect(() => idempotencyKey.derive('attempt', 1.5)).toThrow(/integer/)
    expect(() => idempotencyKey.derive('x'.repeat(256))).toThrow(/at most 255/)
  })

  it('when generated, then each key is a new UUID', () => {
    const keys = new Set(Array.from({ length: 100 }, () => idempotencyKey.generate()))
    expect(keys.size).toBe(100)
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})

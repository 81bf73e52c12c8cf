import { describe, expect, it } from 'vitest'
import { idempotencyKeyFromRawHeaders, parseIdempotencyKey } from '../../src/idempotency/key.js'
import { Problem } from '../../src/problems.js'

function rejection(read: () => unknown) {
  try {
    read()
  } catch (error) {
    return error as Problem
  }
  throw new Error('expected the header to be rejected')
}

describe('parseIdempotencyKey', () => {
  it('when the header is absent, then there is no key', () => {
    expect(parseIdempotencyKey(undefined)).toBeUndefined()
  })

  it('when the key is a bare token, then it is the key as sent', () => {
    expect(parseIdempotencyKey('charge:inv_123:attempt:1')).toBe('charge:inv_123:attempt:1')
  })

  it('when the key is a structured-field string, then the quotes and escapes are removed', () => {
    expect(parseIdempotencyKey('"8e03978e-40d5-43e8-bc93-6894a57f9324"')).toBe('8e03978e-40d5-43e8-bc93-6894a57f9324')
    expect(parseIdempotencyKey('"a \\"quoted\\" \\\\ key"')).toBe('a "quoted" \\ key')
  })

  it('when the key is exactly 255 characters, then it is accepted', () => {
    expect(parseIdempotencyKey('k'.repeat(255))).toHaveLength(255)
  })

  it.each([
    ['empty', ''],
    ['an empty quoted string', '""'],
    ['256 characters', 'k'.repeat(256)],
    ['256 characters once unquoted', `"${'k'.repeat(256)}"`],
    ['non-ASCII', 'clé-1'],
    ['a control character', 'key\u0001'],
    ['an unterminated quote', '"abc'],
    ['an escaped closing quote', '"abc\\"'],
    ['an unknown escape', '"a\\nb"'],
    ['a bare quote inside', '"a"b"'],
  ])('when the key is %s, then it is rejected as idempotency-key-invalid', (_case, header) => {
    const problem = rejection(() => parseIdempotencyKey(header))
    expect(problem).toBeInstanceOf(Problem)
    expect(problem.status).toBe(400)
    expect(problem.body.type).toMatch(/\/idempotency-key-invalid$/)
  })

  it('when the header line is sent twice, in any case, then it is rejected rather than joined', () => {
    const raw = ['Host', 'x', 'Idempotency-Key', 'a', 'idempotency-key', 'b']
    expect(rejection(() => idempotencyKeyFromRawHeaders(raw)).body.type).toMatch(/\/idempotency-key-invalid$/)
  })

  it('when the header line is sent once, then its value is the key', () => {
    expect(idempotencyKeyFromRawHeaders(['IDEMPOTENCY-KEY', '"k-1"', 'Host', 'x'])).toBe('k-1')
    expect(idempotencyKeyFromRawHeaders(['Host', 'x'])).toBeUndefined()
  })
})

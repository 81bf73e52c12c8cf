// Resource ids: a type prefix and 96 random bits, as Stripe's ch_..., so an id says what it names. The prefixes are
// declared with the id schemas (ID_PREFIXES, src/schemas/common.ts).
import { createHash, randomFillSync } from 'node:crypto'
import type { IdPrefix } from '../schemas/common.js'

const ID_BYTES = 12
// Random bytes drawn 256 ids at a time: a call into the CSPRNG per id (randomBytes(12)) took 3.2 µs against 0.25
// from the pool, and a charge takes two ids. Each byte is used once, as crypto.randomUUID does with its own cache.
const pool = Buffer.alloc(ID_BYTES * 256)
let offset = pool.length

export function newId(prefix: IdPrefix): string {
  if (offset === pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const id = `${prefix}_${pool.toString('hex', offset, offset + ID_BYTES)}`
  offset += ID_BYTES
  return id
}

/**
 * The id a resource made by one operation gets, derived from the operation's id (itself random): the same on every
 * retry, takeover and recovery of the operation, so the processor can be told it before the resource is written.
 */
export function idOfOperation(prefix: IdPrefix, operationId: string): string {
  return `${prefix}_${createHash('sha256')
    .update(`${prefix}:${operationId}`)
    .digest('hex')
    .slice(0, ID_BYTES * 2)}`
}

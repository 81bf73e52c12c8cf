// Resource ids: a type prefix and 96 random bits, as Stripe's ch_..., so an id says what it names.
import { randomBytes } from 'node:crypto'

export type IdPrefix = 'ch' | 're' | 'evt' | 'we' | 'wd'

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`
}

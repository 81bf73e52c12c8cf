// What every list route answers: the page as {object: "list", data, has_more}, or, when its cursor names no item
// the list could hold (another account's id, an unknown one), 400 with the same words either way.
import type { Page } from '../db/pagination.js'
import { Problem } from '../problems.js'

/** The page, or the 400 for a cursor that names no `item` (e.g. "charge of this account"). */
export function foundPage<T>(page: Page<T> | undefined, item: string): Page<T> {
  // Well formed, so not validation-failed: it names nothing this list holds (or another account's item, alike).
  if (!page) throw new Problem('cursor-not-found', `starting_after or ending_before names no ${item}.`)
  return page
}

export function listBody<T>(page: Page<T> | undefined, item: string): { object: 'list'; data: T[]; has_more: boolean } {
  const found = foundPage(page, item)
  return { object: 'list', data: found.rows, has_more: found.hasMore }
}

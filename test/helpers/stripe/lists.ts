// Stripe's list endpoints (docs.stripe.com/api/pagination): newest first, `limit` 1 to 100 (default 10),
// `starting_after` / `ending_before` an object id, and `created` an exact time or a {gt, gte, lt, lte} range.
// Unlike search, lists read what was written: an object is listed as soon as it exists.
import type Stripe from 'stripe'
import { invalidRequest, noSuch } from './errors.js'
import { type Form, hashParam, integerParam, stringParam } from './form.js'

/** An endpoint's answer: the status and the body to send. */
export interface Answer<Body> {
  status: number
  body: Body
}

/** One page of `items` (oldest first, as stored), after the `created` filter, newest first. */
export function listOf<Item extends { id: string; created: number }>(
  items: Item[],
  form: Form,
  url: string,
): Stripe.ApiList<Item> {
  const limit = integerParam(form, 'limit') ?? 10
  if (limit < 1 || limit > 100) throw invalidRequest('Invalid limit: must be between 1 and 100', 'limit')
  const matching = items.filter(createdFilter(form)).reverse()
  const after = stringParam(form, 'starting_after')
  const before = stringParam(form, 'ending_before')
  let page: Item[]
  if (after !== undefined) {
    const at = matching.findIndex((item) => item.id === after)
    if (at < 0) throw noSuch('object', after, 'starting_after')
    page = matching.slice(at + 1)
  } else if (before !== undefined) {
    const at = matching.findIndex((item) => item.id === before)
    if (at < 0) throw noSuch('object', before, 'ending_before')
    page = matching.slice(Math.max(0, at - limit), at)
    return { object: 'list', data: page, has_more: at - limit > 0, url }
  } else {
    page = matching
  }
  return { object: 'list', data: page.slice(0, limit), has_more: page.length > limit, url }
}

function createdFilter(form: Form): (item: { created: number }) => boolean {
  if (form.created === undefined) return () => true
  if (typeof form.created === 'string') {
    const exact = integerParam(form, 'created')!
    return (item) => item.created === exact
  }
  const range = hashParam(form, 'created')!
  const bound = (name: string) => integerParam(range, name)
  const [gt, gte, lt, lte] = [bound('gt'), bound('gte'), bound('lt'), bound('lte')]
  return (item) =>
    (gt === undefined || item.created > gt) &&
    (gte === undefined || item.created >= gte) &&
    (lt === undefined || item.created < lt) &&
    (lte === undefined || item.created <= lte)
}

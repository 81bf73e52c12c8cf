// The query of every list: a page size, a cursor either way (the id of an item of the previous page), and a
// window on the creation time; and the page every list answers.
import { Type, type TSchema } from 'typebox'
import { Timestamp } from './common.js'
import { windowEdge } from './timestamp.js'

export const DEFAULT_PAGE_SIZE = 10

export const PageLimit = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: `How many items, 1 to 100 (${DEFAULT_PAGE_SIZE} when left out).`,
})

const ANY_OFFSET =
  'An RFC 3339 date-time, in any offset it allows (up to ±23:59) and to any fraction of a second; ' +
  'items are stored to the microsecond and compared with the exact instant.'

const CURSOR_NOT_FOUND = 'An id that is not an item of this list is a `400 cursor-not-found`.'

export function PageQuery(id: TSchema) {
  return {
    limit: Type.Optional(PageLimit),
    starting_after: Type.Optional({
      ...id,
      description:
        `The id of the last item of the previous page; this page has the items after it (older ones). ` +
        `${CURSOR_NOT_FOUND}`,
    }),
    ending_before: Type.Optional({
      ...id,
      description:
        `The id of the first item of the previous page; this page has the items before it (newer ones), still newest ` +
        `first. ${CURSOR_NOT_FOUND}`,
    }),
    'created[gt]': Type.Optional({ ...Timestamp, description: `Only items created after this time. ${ANY_OFFSET}` }),
    'created[gte]': Type.Optional({
      ...Timestamp,
      description: `Only items created at or after this time. ${ANY_OFFSET}`,
    }),
    'created[lt]': Type.Optional({ ...Timestamp, description: `Only items created before this time. ${ANY_OFFSET}` }),
    'created[lte]': Type.Optional({
      ...Timestamp,
      description: `Only items created at or before this time. ${ANY_OFFSET}`,
    }),
  }
}

/** The answer of a list: `{object: "list", data, has_more}`, named after its items (ChargeList). */
export function ListOf<Item extends TSchema>(item: Item & { title?: string }) {
  return Type.Object(
    { object: Type.Literal('list'), data: Type.Array(item), has_more: Type.Boolean() },
    { title: `${item.title}List` },
  )
}

export interface PageRequest {
  limit: number
  startingAfter?: string | undefined
  endingBefore?: string | undefined
  /** The window's edges as exact timestamptz text (src/schemas/timestamp.ts windowEdge). */
  created: { gt?: string | undefined; gte?: string | undefined; lt?: string | undefined; lte?: string | undefined }
}

/** The page request from a validated list query. */
export function pageRequest(query: Record<string, unknown>): PageRequest {
  const text = (name: string) => query[name] as string | undefined
  const edge = (name: string, round: 'down' | 'up') => {
    const value = text(name)
    return value === undefined ? undefined : windowEdge(value, round)
  }
  return {
    limit: (query.limit as number | undefined) ?? DEFAULT_PAGE_SIZE,
    startingAfter: text('starting_after'),
    endingBefore: text('ending_before'),
    created: {
      gt: edge('created[gt]', 'down'),
      gte: edge('created[gte]', 'up'),
      lt: edge('created[lt]', 'up'),
      lte: edge('created[lte]', 'down'),
    },
  }
}

// The query of every list: a page size, a cursor either way (the id of an item of the previous page), and a
// window on the creation time; and the page every list answers.
import { Type, type TSchema } from 'typebox'
import { Timestamp } from './common.js'

export const DEFAULT_PAGE_SIZE = 10

export const PageLimit = Type.Integer({
  minimum: 1,
  maximum: 100,
  description: `How many items, 1 to 100 (${DEFAULT_PAGE_SIZE} when left out).`,
})

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
    'created[gt]': Type.Optional({ ...Timestamp, description: 'Only items created after this time.' }),
    'created[gte]': Type.Optional({ ...Timestamp, description: 'Only items created at or after this time.' }),
    'created[lt]': Type.Optional({ ...Timestamp, description: 'Only items created before this time.' }),
    'created[lte]': Type.Optional({ ...Timestamp, description: 'Only items created at or before this time.' }),
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
  created: { gt?: string | undefined; gte?: string | undefined; lt?: string | undefined; lte?: string | undefined }
}

/** The page request from a validated list query. */
export function pageRequest(query: Record<string, unknown>): PageRequest {
  const text = (name: string) => query[name] as string | undefined
  return {
    limit: (query.limit as number | undefined) ?? DEFAULT_PAGE_SIZE,
    startingAfter: text('starting_after'),
    endingBefore: text('ending_before'),
    created: { gt: text('created[gt]'), gte: text('created[gte]'), lt: text('created[lt]'), lte: text('created[lte]') },
  }
}

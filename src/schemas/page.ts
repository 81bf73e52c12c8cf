// The query of every list: a page size, a cursor either way (the id of an item of the previous page), and a
// window on the creation time.
import { Type, type TSchema } from 'typebox'
import { Timestamp } from './common.js'

export const DEFAULT_PAGE_SIZE = 10

export function PageQuery(id: TSchema) {
  return {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    /** The page after this item (older ones). */
    starting_after: Type.Optional(id),
    /** The page before this item (newer ones). */
    ending_before: Type.Optional(id),
    'created[gt]': Type.Optional(Timestamp),
    'created[gte]': Type.Optional(Timestamp),
    'created[lt]': Type.Optional(Timestamp),
    'created[lte]': Type.Optional(Timestamp),
  }
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

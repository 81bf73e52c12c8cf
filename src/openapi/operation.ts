// What a route says of itself for openapi.yaml, beside its handler (route config `openapi`). The rest of its entry
// follows from the route itself: its path, method, validation schemas, whether it takes an Idempotency-Key, and
// the problems its shape implies (src/openapi/document.ts).
import type { ProblemType } from '../schemas/problem-types.js'
import type { Answer } from './responses.js'

export interface OperationDoc {
  operationId: string
  /** Operations are grouped by it, in the order they first appear (src/openapi/frame.ts says what each means). */
  tag: string
  summary: string
  description?: string
  /**
   * The typed client's method that calls it, "resource.method" ("charges.create", "charges.listRefunds"): written
   * in openapi.yaml as `x-client`, from which src/client/api.ts is generated (src/openapi/client-source.ts).
   * Without it the operation is not in the client (the processor's webhook, the document itself).
   */
  client?: string
  /** Served without an API key: health and the document. */
  public?: boolean
  /** The body may be left out, or empty: it is then {}. */
  bodyOptional?: boolean
  /** An example request body. */
  bodyExample?: unknown
  /** A body read as bytes and checked by the route itself, not by a schema (a processor's signed webhook). */
  rawBody?: { description: string; headers?: Record<string, string> }
  /** The answers that are not problems, by status. */
  responses: Record<number, Answer>
  /** Problems it answers beyond those its shape implies (authentication, validation, keys, lists: documentProblems). */
  problems?: readonly ProblemType[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** This route's entry in openapi.yaml; a route without one is not part of the API (the reference page's files). */
    openapi?: OperationDoc
  }
}

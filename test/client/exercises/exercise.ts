// What the client test (test/client/client.test.ts) runs of a resource that is not the service's own: one file per
// resource in this folder, exporting `exercise`, that calls each of the resource's operations through the client.
// The client test then checks that every operation of openapi.yaml was reached, a fork's as well.
import type { PaymentsClient } from 'payments-api/client'
import type { Sql } from '../../../src/db/connect.js'

export type ClientExercise = (client: PaymentsClient, context: { sql: Sql; accountId: string }) => Promise<void>

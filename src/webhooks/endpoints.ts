// Webhook endpoints in SQL, and their mapping to the API resource. The signing secret leaves the service twice
// only: in the responses that create and rotate it.
import type { Sql, Transaction } from '../db/connect.js'
import { newId } from '../db/ids.js'
import { pageOf, type Page } from '../db/pagination.js'
import type { PageRequest } from '../schemas/page.js'
import type { CreateWebhookEndpointBody, UpdateWebhookEndpointBody, WebhookEndpoint } from '../schemas/webhook.js'
import { newSecret } from './signature.js'
import { theRow } from '../db/rows.js'

interface EndpointRow {
  id: string
  account_id: string
  url: string
  description: string | null
  enabled_events: string[]
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  secret: string
  created_at: Date
}

/** For how long a rotated secret keeps signing beside the new one. */
const PREVIOUS_SECRET_HOURS = 24

export async function createEndpoint(
  tx: Transaction,
  accountId: string,
  input: CreateWebhookEndpointBody,
): Promise<WebhookEndpoint> {
  const row = theRow(
    await tx<EndpointRow[]>`
      insert into webhook_endpoints (id, account_id, url, description, enabled_events, secret)
      values (${newId('we')}, ${accountId}, ${input.url}, ${input.description ?? null}, ${input.enabled_events},
        ${newSecret()})
      returning *`,
    'the endpoint inserted',
  )
  return { ...toEndpoint(row), secret: row.secret }
}

export async function findEndpoint(
  sql: Sql | Transaction,
  accountId: string,
  id: string,
): Promise<WebhookEndpoint | undefined> {
  const [row] = await sql<EndpointRow[]>`select * from webhook_endpoints where id = ${id} and account_id = ${accountId}`
  return row && toEndpoint(row)
}

/** Newest first (src/db/pagination.ts). */
export async function listEndpoints(
  sql: Sql,
  accountId: string,
  page: PageRequest,
): Promise<Page<WebhookEndpoint> | undefined> {
  const found = await pageOf<EndpointRow>(sql, 'webhook_endpoints', sql`account_id = ${accountId}`, page)
  return found && { rows: found.rows.map(toEndpoint), hasMore: found.hasMore }
}

export async function updateEndpoint(
  sql: Sql,
  accountId: string,
  id: string,
  changes: UpdateWebhookEndpointBody,
): Promise<WebhookEndpoint | undefined> {
  const disabled = changes.disabled
  const [row] = await sql<EndpointRow[]>`
    update webhook_endpoints set
      url = coalesce(${changes.url ?? null}, url),
      enabled_events = coalesce(${changes.enabled_events ?? null}::text[], enabled_events),
      description = case when ${changes.description !== undefined} then ${changes.description ?? null} else
        description end,
      status = case when ${disabled === undefined} then status when ${disabled === true} then 'disabled' else
        'enabled' end,
      disabled_reason = case when ${disabled === undefined} then disabled_reason when ${disabled === true} then
        'disabled by the account' else null end
    where id = ${id} and account_id = ${accountId}
    returning *`
  return row && toEndpoint(row)
}

export async function deleteEndpoint(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const { count } = await sql`delete from webhook_endpoints where id = ${id} and account_id = ${accountId}`
  return count === 1
}

/** A new secret; the old one keeps signing beside it for 24 hours, so receivers can switch without a gap. */
export async function rotateSecret(
  tx: Transaction,
  accountId: string,
  id: string,
): Promise<WebhookEndpoint | undefined> {
  const [row] = await tx<EndpointRow[]>`
    update webhook_endpoints set
      previous_secret = secret,
      previous_secret_expires_at = now() + ${PREVIOUS_SECRET_HOURS} * interval '1 hour',
      secret = ${newSecret()}
    where id = ${id} and account_id = ${accountId}
    returning *`
  return row && { ...toEndpoint(row), secret: row.secret }
}

/** The endpoint answered 410 Gone: it wants no more deliveries. */
export async function disableGoneEndpoint(tx: Transaction, id: string): Promise<void> {
  await tx`update webhook_endpoints set status = 'disabled', disabled_reason = 'the endpoint answered 410 Gone' where
    id = ${id}`
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    status: row.status,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at.toISOString(),
  }
}

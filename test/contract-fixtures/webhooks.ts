// Webhook endpoints and events for the contract tests (test/contract-fixtures/fixture.ts): endpoints on a loopback
// address (the suite allows private URLs), and an event made by a charge.
import type { TestAccount } from '../helpers/app.js'
import { newCharge } from './charges.js'
import type { ContractFixture } from './fixture.js'

const URL = 'http://127.0.0.1:9/hooks'
const newEndpoint = async (user: TestAccount) =>
  (await user.post('/v1/webhook_endpoints', { url: URL, enabled_events: ['*'] })).json().id as string

export const fixture: ContractFixture = {
  ids: {
    WebhookEndpointId: newEndpoint,
    EventId: async (user) => {
      await newEndpoint(user)
      const charge = await newCharge(user)
      return (await user.get(`/v1/events?type=charge.succeeded&limit=1`))
        .json()
        .data.find((event: { data: { object: { id: string } } }) => event.data.object.id === charge).id as string
    },
  },
  bodies: { createWebhookEndpoint: { url: URL, enabled_events: ['charge.succeeded'], description: 'd' } },
}

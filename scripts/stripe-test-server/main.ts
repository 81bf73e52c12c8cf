// npm run stripe:test-server: the Stripe-compatible server the tests use (test/helpers/stripe), on 127.0.0.1, to
// try PROCESSOR=stripe without a Stripe account or a network. It prints the settings to give the service. With
// --webhook-url it sends its events there, signed with --webhook-secret, and bank debits settle by themselves after
// --settle-after seconds; 3-D Secure pages are at each payment's next_action.url.
//   npm run --silent stripe:test-server -- [--port 12111] [--key sk_test_...] [--webhook-url
// http://127.0.0.1:3000/processor/webhooks]
import { parseArgs } from 'node:util'
import { startStripeServer } from '../../test/helpers/stripe/server.js'
import { serveUntilStopped } from '../test-servers.js'

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '12111' },
    key: { type: 'string', default: 'sk_test_localstripetestserver' },
    'webhook-url': { type: 'string' },
    'webhook-secret': { type: 'string', default: 'whsec_localstripetestserver' },
    'settle-after': { type: 'string', default: '5' },
  },
})
const port = Number(values.port)
await serveUntilStopped('Stripe test server', port, async () => {
  const server = await startStripeServer({
    port,
    secretKey: values.key,
    settleBankDebitsAfterMs: Number(values['settle-after']) * 1000,
  })
  if (values['webhook-url']) server.webhooks.endpoint(values['webhook-url'], values['webhook-secret'])
  const webhookSecret = values['webhook-url'] ? ` STRIPE_WEBHOOK_SECRET=${values['webhook-secret']}` : ''
  return { ...server, settings: `STRIPE_API_URL=${server.url} STRIPE_SECRET_KEY=${server.secretKey}${webhookSecret}` }
})

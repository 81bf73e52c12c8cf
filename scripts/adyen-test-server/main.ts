// npm run adyen:test-server: the Adyen-compatible Checkout server the tests use (test/helpers/adyen), on 127.0.0.1,
// to try Adyen without an Adyen account or a network. It prints the settings to give the service. With
// --notification-url it sends its notifications there, signed with --hmac-key; modifications (captures, cancels,
// refunds) are decided --decide-after seconds after Adyen received them. 3-D Secure pages are at each payment's
// action url.
//   npm run --silent adyen:test-server -- [--port 12112] [--key AQE_...] [--merchant-account TestMerchantECOM]
//     [--notification-url http://127.0.0.1:3000/processor/adyen/notifications] [--hmac-key <hex>] [--decide-after 2]
import { parseArgs } from 'node:util'
import { startAdyenServer } from '../../test/helpers/adyen/server.js'
import { serveUntilStopped } from '../test-servers.js'

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '12112' },
    key: { type: 'string', default: 'AQE_localadyentestserver' },
    'merchant-account': { type: 'string', default: 'TestMerchantECOM' },
    'notification-url': { type: 'string' },
    'hmac-key': { type: 'string', default: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056' },
    'decide-after': { type: 'string', default: '2' },
  },
})
const port = Number(values.port)
await serveUntilStopped('Adyen test server', port, async () => {
  const server = await startAdyenServer({
    port,
    apiKey: values.key,
    merchantAccount: values['merchant-account'],
    decideAfterMs: Number(values['decide-after']) * 1000,
  })
  if (values['notification-url']) server.notifications.endpoint(values['notification-url'], values['hmac-key'])
  const hmac = values['notification-url'] ? ` ADYEN_HMAC_KEY=${values['hmac-key']}` : ''
  const settings = `ADYEN_API_URL=${server.url} ADYEN_API_KEY=${server.apiKey}`
  return { ...server, settings: `${settings} ADYEN_MERCHANT_ACCOUNT=${server.merchantAccount}${hmac}` }
})

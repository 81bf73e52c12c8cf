// Where a webhook may be sent: https only, and never to this service's own network. A URL whose host resolves
// to a loopback, private, link-local (cloud metadata, 169.254.169.254), CGNAT or unspecified address is refused,
// at creation and again before each delivery (DNS can change in between), and the delivery connects to the very
// address that was checked. WEBHOOK_ALLOW_PRIVATE_URLS lifts both rules, for development and tests.
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

const blocked = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4')
}
// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are checked against the IPv4 rules by BlockList itself.
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6')
}

/** Where a delivery goes: the URL, and the one address that was checked, which is the one connected to. */
export interface WebhookTarget {
  url: URL
  address: string
  family: 4 | 6
}

export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>
const systemResolver: Resolver = (host) => lookup(host, { all: true })

/**
 * Why `url` may not receive webhooks, or undefined when it may. In development any host goes, resolvable yet or not.
 */
export async function webhookUrlProblem(
  url: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<string | undefined> {
  const parsed = parseWebhookUrl(url, allowPrivate)
  if ('problem' in parsed) return parsed.problem
  if (allowPrivate) return undefined
  const target = await webhookTarget(url, allowPrivate, resolve)
  return 'problem' in target ? target.problem : undefined
}

/** The setting that lifts both rules, named in every refusal it would lift. */
const ALLOW_SETTING = 'WEBHOOK_ALLOW_PRIVATE_URLS=true'

/** The URL, if its form may receive webhooks: https (or http in development), no credentials. */
function parseWebhookUrl(url: string, allowPrivate: boolean): URL | { problem: string } {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return { problem: 'is not a URL' }
  }
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:'))
    return {
      problem: `must use https (http is taken only where the service runs with ${ALLOW_SETTING}, in development)`,
    }
  if (parsed.username || parsed.password) return { problem: 'must not carry credentials' }
  return parsed
}

/**
 * The address a delivery to `url` connects to, resolved once and checked, or why it may not be sent. The sender
 * connects to this address and no other (src/webhooks/send.ts): a DNS answer that changes between the check and
 * the connection (DNS rebinding) cannot point a signed request at a private address.
 */
export async function webhookTarget(
  url: string,
  allowPrivate: boolean,
  resolve: Resolver = systemResolver,
): Promise<WebhookTarget | { problem: string }> {
  const parsed = parseWebhookUrl(url, allowPrivate)
  if ('problem' in parsed) return parsed
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  let addresses: { address: string; family: number }[]
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host)
  } catch {
    return { problem: `has a host (${host}) that does not resolve` }
  }
  const [first] = addresses
  if (!first) return { problem: `has a host (${host}) that does not resolve` }
  const internal = addresses.find(({ address, family }) => blocked.check(address, family === 6 ? 'ipv6' : 'ipv4'))
  if (internal && !allowPrivate)
    return {
      problem:
        `resolves to ${internal.address}, a loopback, private or link-local address (taken only where the service ` +
        `runs with ${ALLOW_SETTING}, in development)`,
    }
  return { url: parsed, address: first.address, family: first.family === 6 ? 6 : 4 }
}

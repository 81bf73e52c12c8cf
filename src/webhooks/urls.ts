// Where a webhook may be sent: https only, and never to this service's own network. A URL whose host resolves
// to a loopback, private, link-local (cloud metadata, 169.254.169.254), CGNAT or unspecified address is refused,
// at creation and again before each delivery (DNS can change in between). WEBHOOK_ALLOW_PRIVATE_URLS lifts both
// rules, for development and tests.
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

const blocked = new BlockList()
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
  blocked.addSubnet(network, prefix, 'ipv4')
}
// IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) are checked against the IPv4 rules by BlockList itself.
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  blocked.addSubnet(network, prefix, 'ipv6')
}

/** Why `url` may not receive webhooks, or undefined when it may. */
export async function webhookUrlProblem(url: string, allowPrivate: boolean): Promise<string | undefined> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'is not a URL'
  }
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return 'must use https'
  if (parsed.username || parsed.password) return 'must not carry credentials'
  if (allowPrivate) return undefined
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  let addresses: { address: string; family: number }[]
  try {
    addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true })
  } catch {
    return `has a host (${host}) that does not resolve`
  }
  const internal = addresses.find(({ address, family }) => blocked.check(address, family === 6 ? 'ipv6' : 'ipv4'))
  return internal ? `resolves to ${internal.address}, a loopback, private or link-local address` : undefined
}

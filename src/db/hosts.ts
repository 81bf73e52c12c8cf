// A connection string may name several servers, as libpq allows and pg_auto_failover prints them
// (`postgres://node1:5432,node2:5432/payments?target_session_attrs=read-write`). postgres.js reads that form
// itself; node-postgres (graphile-worker's driver) and the URL class take one host, so this splits it.

export interface HostPort {
  host: string
  port: number
}

const URL_PARTS = /^(postgres(?:ql)?:\/\/(?:[^@/?#]*@)?)([^/?#]*)(.*)$/

/** The servers a postgres:// URL names, in order, and the URL with only the first (what a one-host parser accepts). */
export function parseHosts(url: string): { hosts: HostPort[]; firstHostUrl: string } {
  const match = URL_PARTS.exec(url)
  if (!match) return { hosts: [], firstHostUrl: url }
  const [, head, hostList, tail] = match as unknown as [string, string, string, string]
  const hosts = hostList
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      // [::1]:5432, host:5432 or host alone.
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry)
      const [host = '', port] = bracketed ? [bracketed[1], bracketed[2]] : entry.split(':')
      return { host, port: port ? Number(port) : 5432 }
    })
  return { hosts, firstHostUrl: `${head}${hostList.split(',')[0] ?? ''}${tail}` }
}

/** The same URL (every host kept) naming another database. */
export function withDatabase(url: string, database: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?/, `$1/${encodeURIComponent(database)}`)
}

/** The URL's query parameter `name` (sslmode, target_session_attrs), if present. */
export function urlParameter(url: string, name: string): string | undefined {
  return new URL(parseHosts(url).firstHostUrl).searchParams.get(name) ?? undefined
}

// A reverse proxy over real sockets, as Caddy or nginx runs in front of the service: it forwards each request and
// appends the address it came from to X-Forwarded-For.
import { createServer, request as httpRequest, type Server } from 'node:http'

export async function forwardingProxy(target: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(target)
  const server: Server = createServer((incoming, outgoing) => {
    const forwardedFor = [incoming.headers['x-forwarded-for'], incoming.socket.remoteAddress].filter(Boolean).join(', ')
    const proxied = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, 'x-forwarded-for': forwardedFor },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    proxied.on('error', () => outgoing.writeHead(502).end())
    incoming.pipe(proxied)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** GET through `url` from a given loopback address (127.0.0.2, 127.0.0.3, ...): clients a proxy can tell apart. */
export function getFrom(localAddress: string, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { localAddress, headers }, (answer) => {
      answer.resume()
      resolve(answer.statusCode ?? 0)
    })
    sent.on('error', reject).end()
  })
}

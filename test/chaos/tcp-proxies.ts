// TCP proxies the nemesis controls. A database proxy in front of each PostgreSQL node can cut every connection
// at once (as a restarted pooler or a network blip does) or stall them (nothing passes either way, nothing
// closes: a host gone quiet). A front in front of the API instances spreads client connections over whichever
// instance has a port now (a killed instance is left out until it is back; a stopped one is not known to be
// stopped, as a load balancer does not know), and refuses the connection when none has.
import { connect, createServer, type Server, type Socket } from 'node:net'

export interface DatabaseProxy {
  port: number
  /** Ends every connection now. */
  cut(): void
  /** Nothing passes on any connection, old or new, for `ms`. */
  stall(ms: number): void
  close(): Promise<void>
}

export async function startDatabaseProxy(targetPort: number): Promise<DatabaseProxy> {
  const pairs = new Set<[Socket, Socket]>()
  let stalledUntil = 0
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    const pair: [Socket, Socket] = [client, upstream]
    pairs.add(pair)
    client.pipe(upstream)
    upstream.pipe(client)
    if (Date.now() < stalledUntil) pausePair(pair, stalledUntil - Date.now())
    for (const socket of pair)
      socket
        .on('error', () => {})
        .on('close', () => {
          pairs.delete(pair)
          client.destroy()
          upstream.destroy()
        })
  })
  const pausePair = (pair: [Socket, Socket], ms: number) => {
    for (const socket of pair) socket.pause()
    setTimeout(() => {
      for (const socket of pair) socket.resume()
    }, ms).unref()
  }
  const port = await listen(server)
  return {
    port,
    cut: () => destroyAll(pairs),
    stall: (ms) => {
      stalledUntil = Date.now() + ms
      for (const pair of pairs) pausePair(pair, ms)
    },
    close: () => closeServer(server, () => destroyAll(pairs)),
  }
}

export interface Front {
  url: string
  close(): Promise<void>
}

/** `ports()` is asked on each connection: the ports of the instances that have one now. */
export async function startFront(ports: () => number[], pick: (count: number) => number): Promise<Front> {
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const live = ports()
    if (live.length === 0) return void client.destroy()
    const upstream = connect(live[pick(live.length)]!, '127.0.0.1')
    client.pipe(upstream)
    upstream.pipe(client)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket
        .on('error', () => {})
        .on('close', () => {
          sockets.delete(socket)
          client.destroy()
          upstream.destroy()
        })
    }
  })
  const port = await listen(server)
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      closeServer(server, () => {
        for (const socket of sockets) socket.destroy()
      }),
  }
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as { port: number }).port
}

function closeServer(server: Server, destroyAll: () => void): Promise<void> {
  destroyAll()
  return new Promise((resolve) => server.close(() => resolve()))
}

function destroyAll(pairs: Iterable<[Socket, Socket]>): void {
  for (const [client, upstream] of pairs) {
    client.destroy()
    upstream.destroy()
  }
}

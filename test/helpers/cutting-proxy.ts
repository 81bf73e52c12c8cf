// A TCP proxy in front of PostgreSQL that cuts a connection when the client sends a chosen statement: the
// server answers it as pg_terminate_backend would (a FATAL 57P01) and the socket closes. Or, with 'silence', the
// connection goes quiet instead: that statement and all after it are swallowed, nothing answers, nothing closes
// (a host gone without a reset, a pooler waiting for a server). Or, with 'reset', the client's socket is reset
// (ECONNRESET, as a node that crashed or a middlebox that gave up). Everything else passes.
import { connect, createServer, type AddressInfo } from 'node:net'

export interface CuttingProxy {
  url: string
  /** How many connections it has cut so far. */
  cuts(): number
  close(): Promise<void>
}

/** Cuts the connection that sends a chunk `cut` accepts, up to `times` connections in all. */
export async function startCuttingProxy(
  databaseUrl: string,
  cut: (chunk: Buffer) => boolean,
  times = 1,
  how: 'terminate' | 'silence' | 'reset' = 'terminate',
): Promise<CuttingProxy> {
  const target = new URL(databaseUrl)
  let cuts = 0
  const proxy = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname)
    let silent = false
    client.on('data', (chunk: Buffer) => {
      if (silent) return
      if (cuts < times && cut(chunk)) {
        cuts++
        if (how === 'silence') {
          silent = true
          return
        }
        if (how === 'reset') {
          client.resetAndDestroy()
          upstream.destroy()
          return
        }
        client.end(fatalTermination())
        upstream.destroy()
        return
      }
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => client.writable && client.write(chunk))
    for (const socket of [client, upstream])
      socket
        .on('error', () => {})
        .on('close', () => {
          client.destroy()
          upstream.destroy()
        })
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const url = new URL(databaseUrl)
  url.port = String((proxy.address() as AddressInfo).port)
  return {
    url: url.toString(),
    cuts: () => cuts,
    close: () => new Promise((resolve) => proxy.close(() => resolve())),
  }
}

/** The ErrorResponse a backend sends when pg_terminate_backend ends it. */
function fatalTermination(): Buffer {
  const fields = ['SFATAL', 'VFATAL', 'C57P01', 'Mterminating connection due to administrator command'].map((field) =>
    Buffer.from(`${field}\0`),
  )
  const body = Buffer.concat([...fields, Buffer.from([0])])
  const header = Buffer.alloc(5)
  header.write('E', 0)
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

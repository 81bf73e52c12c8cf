// A TCP proxy in front of PostgreSQL that cuts a connection when the client sends a chosen statement: the
// server answers it as pg_terminate_backend would (a FATAL 57P01) and the socket closes. Or, with 'silence', the
// connection goes quiet instead: that statement and all after it are swallowed, nothing answers, nothing closes
// (a host gone without a reset, a pooler waiting for a server). Or, with 'reset', the client's socket is reset
// (ECONNRESET, as a node that crashed or a middlebox that gave up). Or, with 'waiting', it behaves as PgBouncer
// does for a client whose server is gone: statements are swallowed (waiting for a server that never comes), and a
// CancelRequest is answered on the client's connection with 57014 and ReadyForQuery, which stays open, waiting
// again for the next statement. Everything else passes.
import { connect, createServer, type AddressInfo, type Socket } from 'node:net'

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
  how: 'terminate' | 'silence' | 'reset' | 'waiting' = 'terminate',
): Promise<CuttingProxy> {
  const target = new URL(databaseUrl)
  let cuts = 0
  const waiting = new Set<Socket>()
  const proxy = createServer((client) => {
    if (how === 'waiting') client.once('data', (first: Buffer) => isCancelRequest(first) && answerCancel(client))
    const upstream = connect(Number(target.port), target.hostname)
    let silent = false
    client.on('data', (chunk: Buffer) => {
      if (silent) return
      if (cuts < times && cut(chunk)) {
        cuts++
        if (how === 'silence' || how === 'waiting') {
          silent = true
          if (how === 'waiting') waiting.add(client.on('close', () => waiting.delete(client)))
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
  // Every waiting statement is canceled, whichever backend key the request names: the test has one waiting client.
  function answerCancel(request: Socket) {
    request.destroy()
    for (const client of waiting)
      client.write(
        Buffer.concat([errorResponse('ERROR', '57014', 'canceling statement due to user request'), readyForQuery()]),
      )
  }

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
  return errorResponse('FATAL', '57P01', 'terminating connection due to administrator command')
}

function errorResponse(severity: string, code: string, message: string): Buffer {
  const fields = [`S${severity}`, `V${severity}`, `C${code}`, `M${message}`].map((field) => Buffer.from(`${field}\0`))
  const body = Buffer.concat([...fields, Buffer.from([0])])
  const header = Buffer.alloc(5)
  header.write('E', 0)
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

function readyForQuery(): Buffer {
  return Buffer.from([0x5a, 0, 0, 0, 5, 0x49])
}

/** A CancelRequest: length 16, then the code 80877102, on a connection of its own. */
function isCancelRequest(chunk: Buffer): boolean {
  return chunk.length >= 8 && chunk.readInt32BE(0) === 16 && chunk.readInt32BE(4) === 80877102
}

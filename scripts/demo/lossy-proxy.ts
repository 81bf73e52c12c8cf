// A proxy that loses answers, the failure this service exists for: it forwards a request to the API, waits for
// the API's whole answer (the charge is made by then), and instead of passing it on, closes the client's
// connection. The client sees a network error and cannot know whether it was charged.
import { createServer, request as forward, type IncomingMessage, type ServerResponse } from 'node:http'
import { once } from 'node:events'

export interface LossyProxy {
  url: string
  /** Lose the answers to the next `count` requests that `matches` (by default, every request). */
  dropNext(count: number, matches?: (request: IncomingMessage) => boolean): void
  /** What happened to each request, in order. */
  log: {
    method: string
    path: string
    idempotencyKey: string | undefined
    body: string
    status: number
    dropped: boolean
  }[]
  close(): Promise<void>
}

export async function startLossyProxy(target: string): Promise<LossyProxy> {
  const targetUrl = new URL(target)
  let toDrop = 0
  let matches: (request: IncomingMessage) => boolean = () => true
  const log: LossyProxy['log'] = []

  const server = createServer((request, response) => {
    relay(request, response).catch(() => request.socket.destroy()) // the API is unreachable: so is the proxy
  })
  async function relay(request: IncomingMessage, response: ServerResponse) {
    const body: Buffer[] = []
    for await (const chunk of request) body.push(chunk as Buffer)
    const upstream = forward({
      host: targetUrl.hostname,
      port: targetUrl.port,
      method: request.method,
      path: request.url,
      headers: request.headers,
    })
    upstream.end(Buffer.concat(body))
    const [answer] = (await once(upstream, 'response')) as [IncomingMessage]
    const answerBody: Buffer[] = []
    for await (const chunk of answer) answerBody.push(chunk as Buffer)
    const dropped = toDrop > 0 && matches(request)
    if (dropped) toDrop--
    log.push({
      method: request.method ?? 'GET',
      path: request.url ?? '/',
      idempotencyKey: request.headers['idempotency-key'] as string | undefined,
      body: Buffer.concat(body).toString(),
      status: answer.statusCode ?? 0,
      dropped,
    })
    if (dropped) return void request.socket.destroy() // the API has answered; the client never hears it
    response.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(answerBody))
  }
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    dropNext(count, only = () => true) {
      toDrop = count
      matches = only
    },
    log,
    async close() {
      server.closeAllConnections()
      server.close()
      await once(server, 'close')
    },
  }
}

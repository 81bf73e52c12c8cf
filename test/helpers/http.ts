// Raw HTTP/1.1 over a socket, for what fetch and inject cannot send: no Host header, duplicate header lines,
// bytes that are not UTF-8.
import { createConnection } from 'node:net'

export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/** Sends `request` as is and resolves with everything the server wrote before it closed the connection. */
export function rawExchange(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    let response = ''
    const socket = createConnection({ port, host: '127.0.0.1' }, () => socket.write(request))
    socket
      .on('data', (chunk) => (response += chunk))
      .on('end', () => resolve(response))
      .on('error', reject)
  })
}

export function parseRawResponse(raw: string): RawResponse {
  const [head = '', ...rest] = raw.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  )
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') }
}

/** A request with Connection: close and a correct Content-Length, from a head without them and an optional body. */
export function rawRequest(head: string, body: string | Buffer = ''): Buffer {
  const bytes = Buffer.from(body)
  const length = bytes.length > 0 || head.startsWith('POST') ? `Content-Length: ${bytes.length}\r\n` : ''
  return Buffer.concat([Buffer.from(`${head}\r\n${length}Connection: close\r\n\r\n`), bytes])
}

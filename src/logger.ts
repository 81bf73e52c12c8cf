// pino settings shared by the server, the worker and the scripts: request ids, and secrets redacted.
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { LogController, type FastifyServerOptions } from 'fastify'
import type { DestinationStream } from 'pino'
import pretty from 'pino-pretty'

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

export function loggerOptions(level: string) {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
    serializers: {
      req: (request: { method: string; url: string; headers: Record<string, unknown>; ip?: string }) => ({
        method: request.method,
        url: request.url,
        headers: request.headers,
        remoteAddress: request.ip,
      }),
    },
  }
}

/** Where log lines go: JSON on stdout, or pino-pretty's readable lines for a person (LOG_FORMAT, see config.ts). */
export function logDestination(format: 'auto' | 'json' | 'pretty'): DestinationStream | undefined {
  const terminal = Boolean(process.stdout.isTTY)
  if (format === 'json' || (format === 'auto' && !terminal)) return undefined
  // Synchronous, so that the line saying why a process exits is written before it does.
  return pretty({ sync: true, colorize: terminal, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
}

/** Honours a caller's X-Request-Id (so logs join across services); otherwise mints one. */
export const requestIdOptions: Pick<FastifyServerOptions, 'genReqId' | 'requestIdHeader' | 'logController'> = {
  requestIdHeader: false,
  logController: new LogController({ requestIdLogLabel: 'request_id' }),
  genReqId: (request: IncomingMessage) => {
    const incoming = request.headers['x-request-id']
    return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID()
  },
}

// A logger whose lines (warn and above) a test reads back as objects, for what the code under test says.
import { Writable } from 'node:stream'
import { type Logger, pino } from 'pino'

export function warnLines(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write: (chunk, _encoding, done) => {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  return { log: pino({ level: 'warn' }, sink), lines }
}

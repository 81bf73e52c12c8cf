// Logs for machines and for people: JSON when stdout is not a terminal (a pipe, a log collector), pino-pretty's
// readable lines when LOG_FORMAT=pretty (or, by default, when stdout is a terminal).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { startServer } from './helpers/processes.js'
import { until } from './helpers/system.js'

let database: TestDatabase
beforeAll(async () => (database = await createTestDatabase()))
afterAll(() => database.drop())

describe('log format', () => {
  it('when stdout is a pipe, then every line is a JSON object; with LOG_FORMAT=pretty, lines are for reading', async () => {
    const machine = await startServer({ DATABASE_URL: database.url })
    const person = await startServer({ DATABASE_URL: database.url, LOG_FORMAT: 'pretty' })
    // "ready" comes after "Server listening", which startServer waits for.
    await until(async () => [machine, person].every((server) => server.output().includes('ready (all)')))
    for (const server of [machine, person]) server.child.kill('SIGTERM')
    await Promise.all([machine.exited, person.exited])

    const jsonLines = machine.output().trim().split('\n')
    for (const line of jsonLines) expect(() => JSON.parse(line), line).not.toThrow()
    expect(jsonLines.map((line) => JSON.parse(line).msg)).toContainEqual(expect.stringMatching(/^ready \(all\)/))

    const readable = person.output().trim().split('\n')
    expect(readable.some((line) => line.startsWith('{'))).toBe(false)
    expect(person.output()).not.toContain('crontab')
    expect(readable).toContainEqual(expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: ready \(all\)/))
  })
})

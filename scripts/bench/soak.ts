// npm run bench -- --soak[=minutes]: new charges without a pause, minute after minute, against one process:
// throughput must stay flat (the last minute within 10% of the first), not decay as the process ages.
import { measure, type LoadOptions } from './load.js'
import type { ServerUnderTest } from './processes.js'

export async function soak(server: ServerUnderTest, load: LoadOptions, minutes: number): Promise<string> {
  const perMinute: number[] = []
  for (let minute = 0; minute < minutes; minute++) {
    perMinute.push((await measure(server, { ...load, seconds: 60 })).rps)
    process.stderr.write(`  soak minute ${minute + 1}/${minutes}: ${perMinute.at(-1)!.toFixed(0)} req/s\n`)
  }
  const ratio = perMinute.at(-1)! / perMinute[0]!
  return [
    '',
    `Soak, ${minutes} minutes of new charges against one process (req/s per minute): ` +
      `${perMinute.map((rps) => rps.toFixed(0)).join(', ')}`,
    `  ${ratio >= 0.9 ? 'ok  ' : 'MISS'} last minute / first minute: ${ratio.toFixed(2)}x   goal >= 0.9x`,
  ].join('\n')
}

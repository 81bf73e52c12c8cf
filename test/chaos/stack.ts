// One service as deployed: API instances and workers on one database, behind a front that spreads the clients'
// connections, each process kept running by a supervisor (a killed or crashed process is started again, as
// systemd or Kubernetes would). The nemesis kills and stops its processes; the report counts what it saw.
import { startServer, type ServerProcess } from '../helpers/processes.js'
import type { Random } from './random.js'
import { startFront, type Front } from './tcp-proxies.js'

export interface Member {
  name: string
  role: 'api' | 'worker'
  env: Record<string, string>
  process: ServerProcess | undefined
  /** SIGSTOPped now. */
  stopped: boolean
  /** Start-ups that exited before they were ready, with the last lines each printed. */
  failedStarts: string[]
  /** Exits nobody asked for (not a SIGKILL of the nemesis), with the last lines printed. */
  ownExits: string[]
  /** Everything each ended process (or failed start-up) printed, for the run's log directory. */
  endedOutputs: string[]
  /** What the start-up under way has printed so far, while there is one. */
  starting: (() => string) | undefined
}

export interface Stack {
  name: string
  front: Front
  members: Member[]
  /** Kills with SIGKILL; the supervisor starts it again after `restartAfterMs`. */
  kill(member: Member, restartAfterMs: number): void
  /** SIGSTOP now, SIGCONT after `ms`. */
  pause(member: Member, ms: number): void
  /** Continues every stopped process and waits until every member is running and ready. */
  heal(timeoutMs: number): Promise<void>
  close(): Promise<void>
}

export async function startStack(
  name: string,
  specs: Omit<Member, 'process' | 'stopped' | 'failedStarts' | 'ownExits' | 'endedOutputs' | 'starting'>[],
  random: Random,
): Promise<Stack> {
  const members: Member[] = specs.map((spec) => ({
    ...spec,
    process: undefined,
    stopped: false,
    failedStarts: [],
    ownExits: [],
    endedOutputs: [],
    starting: undefined,
  }))
  let closing = false
  const killedByUs = new WeakSet<ServerProcess>()

  /** Starts the member until it is ready, however many start-ups fail (each counted); restarts it when it exits. */
  const run = async (member: Member): Promise<void> => {
    while (!closing) {
      try {
        const started = await startServer(
          { ...member.env, ROLE: member.role },
          (output) => (member.starting = output),
        ).finally(() => (member.starting = undefined))
        if (closing) return void started.child.kill('SIGKILL') // ready after the stack gave up or closed
        member.process = started
        void started.exited.then(() => {
          member.endedOutputs.push(started.output())
          if (member.process === started) member.process = undefined
          member.stopped = false
          if (closing) return
          if (!killedByUs.has(started)) member.ownExits.push(started.output().slice(-1500))
          setTimeout(
            () => void run(member),
            killedByUs.has(started) ? (restartDelays.get(started) ?? 1000) : 1000,
          ).unref()
        })
        return
      } catch (error) {
        member.endedOutputs.push((error as Error).message)
        member.failedStarts.push((error as Error).message.slice(-1500))
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    }
  }
  const restartDelays = new WeakMap<ServerProcess, number>()
  // The first migrates the database; the others start once it has. Before any fault, a process that cannot start
  // is the run's failure, said with what it printed, not a wait without end (a PgBouncer that refused every user
  // kept one starting until CI was stopped).
  const started = (async () => {
    await run(members[0]!)
    await Promise.all(members.slice(1).map(run))
  })()
  let timer: NodeJS.Timeout | undefined
  const startMs = 180_000
  await Promise.race([
    started,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        closing = true
        for (const member of members) member.process?.child.kill('SIGKILL')
        const failed = members
          .filter((member) => !member.process)
          .map(
            (member) =>
              `${member.name}, ${member.failedStarts.length} start-ups failed, the last: ` +
              `${member.failedStarts.at(-1) ?? 'none'}; the one under way so far: ${member.starting?.().slice(-1500)}`,
          )
        reject(new Error(`${name}: not every process started within ${startMs} ms:\n${failed.join('\n')}`))
      }, startMs)
    }),
  ]).finally(() => clearTimeout(timer))

  const portOf = (member: Member) => (member.process ? Number(new URL(member.process.url).port) : undefined)
  const apis = members.filter((member) => member.role === 'api')
  const front = await startFront(
    () => apis.map(portOf).filter((port): port is number => port !== undefined),
    (count) => random.int(0, count - 1),
  )

  return {
    name,
    front,
    members,
    kill: (member, restartAfterMs) => {
      const current = member.process
      if (!current) return
      killedByUs.add(current)
      restartDelays.set(current, restartAfterMs)
      current.child.kill('SIGKILL')
    },
    pause: (member, ms) => {
      const current = member.process
      if (!current || member.stopped) return
      member.stopped = true
      current.child.kill('SIGSTOP')
      setTimeout(() => {
        if (member.process !== current) return
        member.stopped = false
        current.child.kill('SIGCONT')
      }, ms).unref()
    },
    heal: async (timeoutMs) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        for (const member of members) {
          if (member.stopped && member.process) {
            member.process.child.kill('SIGCONT')
            member.stopped = false
          }
        }
        const ready = await Promise.all(members.map((member) => isReady(member)))
        if (ready.every(Boolean)) return
        if (Date.now() > deadline) {
          const notReady = members
            .filter((_, index) => !ready[index])
            .map((member) => {
              const lastFailure = member.failedStarts.at(-1)?.slice(-2000) ?? 'none'
              const otherwise = member.starting
                ? `(starting, not ready yet; so far:\n${member.starting().slice(-2000)})`
                : `(not running; its last failed start-up: ${lastFailure})`
              return `${member.name}:\n${member.process?.output().slice(-2000) ?? otherwise}`
            })
          throw new Error(
            `${name}: not every process was ready ${timeoutMs} ms after the faults stopped:\n${notReady.join('\n')}`,
          )
        }
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    },
    close: async () => {
      closing = true
      for (const member of members) member.process?.child.kill('SIGKILL')
      await front.close()
    },
  }
}

/** Whether the member answers /readyz with 200 now. */
export async function isReady(member: Member): Promise<boolean> {
  if (!member.process || member.stopped) return false
  try {
    return (await fetch(`${member.process.url}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200
  } catch {
    return false
  }
}

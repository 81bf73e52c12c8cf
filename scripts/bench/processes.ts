// The processes a benchmark measures: servers started fresh, and the CPU time they (and PostgreSQL) spend.
import { spawn, type ChildProcess } from 'node:child_process'
import { readdir, readFile } from 'node:fs/promises'
import { createServer } from 'node:net'

const ROOT = new URL('../../', import.meta.url).pathname
// Only against a hang: CI runs the benchmarks at nice 19 beside the fault run, which can take nearly all the CPU for
// minutes (a server at nice 19 got neither 30 s nor 300 s of it while the faults settled), and CI's own limit is
// further still.
const START_BOUND_MS = 20 * 60_000

export interface ServerUnderTest {
  name: string
  url: string
  pid: number
  stop(): Promise<void>
}

/**
 * Starts `script` (a TypeScript entry point) on a free port and resolves once GET /healthz answers. BENCH_NODE_ARGS
 * adds options for Node that NODE_OPTIONS refuses: `--cpu-prof --cpu-prof-dir=/tmp/profiles` profiles each server.
 */
export async function startServer(name: string, script: string, env: Record<string, string>): Promise<ServerUnderTest> {
  const port = await freePort()
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  // Until it answers or exits (START_BOUND_MS only stops a hang).
  const startedAt = performance.now()
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode} before it answered`)
    if (
      await fetch(`${url}/healthz`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break
    if (performance.now() - startedAt > START_BOUND_MS) {
      child.kill('SIGKILL')
      throw new Error(`${name} neither answered nor exited within ${START_BOUND_MS / 1000} s`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    name,
    url,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** CPU time (user + system, in ms) that `pid` has used so far. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  if (!stat) return 0
  // Fields after "pid (comm)": state is 3rd; utime and stime are the 14th and 15th of the whole line.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / 100
}

/** CPU time of a PostgreSQL server: its postmaster and every process it forked (the backends). */
export async function clusterCpuMs(postmasterPid: number): Promise<number> {
  let total = await cpuMs(postmasterPid)
  for (const entry of await readdir('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (ppid === postmasterPid) total += await cpuMs(Number(entry))
  }
  return total
}

/** Resident memory of `pid`, in MB. */
export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  return kb / 1024
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address()
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port')),
      )
    })
  })
}

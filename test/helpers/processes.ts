// Runs the real server and scripts as child processes, the way a user does.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'

const ROOT = new URL('../../', import.meta.url).pathname

export interface ServerProcess {
  url: string
  child: ChildProcess
  output: () => string
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>
}

/** Starts src/server.ts on a free port and resolves once it listens. */
export async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match) resolve(match[1]!)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`server exited with ${code} before listening:\n${output}`)))
  })
  return { url, child, output: () => output, exited }
}

/** Runs an npm script to completion and returns what it printed. */
export async function runNpmScript(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['run', '--silent', ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}

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

/** Starts src/server.ts on a free port and resolves once it listens; `onSpawn` reads its output while it starts. */
export async function startServer(
  env: Record<string, string>,
  onSpawn?: (output: () => string) => void,
): Promise<ServerProcess> {
  return startScript(
    'src/server.ts',
    [],
    { PORT: '0', LOG_LEVEL: 'info', ...env },
    /Server listening at (http:\/\/127\.0\.0\.1:\d+)/,
    'server',
    onSpawn,
  )
}

/**
 * Starts a TypeScript script (with this package's own subpaths resolving to source) and resolves once its output
 * matches `ready`; `url` is the match's first group, if any.
 */
export async function startScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  name = script,
  onSpawn?: (output: () => string) => void,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  onSpawn?.(() => output)
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk
      const match = ready.exec(output)
      if (match) resolve(match[1] ?? '')
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    void exited.then((code) => reject(new Error(`${name} exited with ${code} before it was ready:\n${output}`)))
  })
  return { url, child, output: () => output, exited }
}

/** Runs an npm script to completion and returns what it printed. */
export async function runNpmScript(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('npm', ['run', '--silent', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = await once(child, 'exit')
  return { code, stdout, stderr }
}

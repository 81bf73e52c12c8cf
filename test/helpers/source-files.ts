// The TypeScript files under a directory of the repository, for the tests that read the code itself (line length,
// import circles, table owners).
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'

export async function typescriptFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : typescriptFiles(path)
      return path.endsWith('.ts') ? [path] : []
    }),
  )
  return nested.flat()
}

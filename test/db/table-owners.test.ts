// One owner per table: every statement that writes a table is in its repository, and other modules call it, so a
// reader finds every way a charge can change in one file, and every way money is posted in another.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const OWNERS: Record<string, string> = {
  charges: 'src/charges/repository.ts',
  refunds: 'src/refunds/repository.ts',
  // And so its entries, which are in its rows (ledger_entries is a view of them).
  ledger_transactions: 'src/ledger/repository.ts',
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = join(dir, entry.name)
      return entry.isDirectory() ? sourceFiles(path) : Promise.resolve(path.endsWith('.ts') ? [path] : [])
    }),
  )
  return nested.flat()
}

describe('table owners', () => {
  it('when a module other than its repository writes charges, refunds or the ledger, then it is named', async () => {
    const strays: string[] = []
    for (const file of await sourceFiles('src')) {
      const text = await readFile(file, 'utf8')
      for (const [table, owner] of Object.entries(OWNERS)) {
        const writes = new RegExp(`\\b(insert\\s+into|update|delete\\s+from)\\s+${table}\\b`, 'gi')
        if (file !== owner && writes.test(text)) strays.push(`${file} writes ${table} (its owner: ${owner})`)
      }
    }
    expect(strays).toEqual([])
  })
})

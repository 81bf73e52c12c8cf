// The model's table from each step to the code it stands for (test/model/idempotency.pml) cannot go stale unseen:
// every file it names exists, and every function, method or SQL function it names is still in the code. A rename
// that forgets the model fails here, naming what the table points at and can no longer find.
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = new URL('../../', import.meta.url).pathname
const model = await readFile(join(ROOT, 'test/model/idempotency.pml'), 'utf8')
const table = model.slice(model.indexOf(' * Step '), model.indexOf(' * Guards'))

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })
  return entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name))
}
const code = (
  await Promise.all(
    [...(await filesUnder('src')), ...(await filesUnder('db/migrations'))].map((file) => readFile(file, 'utf8')),
  )
).join('\n')

describe("the model's table of steps", () => {
  it('when it names a file, then the file exists in src/ (or is a migration)', async () => {
    const named = [...new Set([...table.matchAll(/\b([a-z-]+\/[\w./-]+\.ts)\b/g)].map((match) => match[1]!))]
    expect(named.length).toBeGreaterThan(10)
    const sources = new Set((await filesUnder('src')).map((file) => file.slice(join(ROOT, 'src/').length)))
    expect(
      named.filter((file) => !sources.has(file)).map((file) => `the model names src/${file}, which does not exist`),
    ).toEqual([])
  })

  it('when it names a function, a method or an SQL function, then the code still has it', () => {
    const identifiers = [
      ...new Set(
        [...table.matchAll(/\b((?:[A-Za-z]+\.)?(?:[a-z]+|[A-Z][a-z]+)[A-Z][A-Za-z]*|[a-z]+(?:_[a-z]+){2,})\b/g)].map(
          (match) => match[1]!,
        ),
      ),
    ]
    expect(identifiers.length).toBeGreaterThan(15)
    const missing = identifiers.filter((identifier) => !code.includes(identifier.split('.').pop()!))
    expect(missing.map((identifier) => `the model names ${identifier}, which the code no longer has`)).toEqual([])
  })
})

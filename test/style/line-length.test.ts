// Code and prose side by side: no line of TypeScript is wider than Biome's 120 columns. Biome wraps code but not a
// string, a template or SQL, which is where long lines hid (one was 1,004 characters of OpenAPI prose in a route);
// those are wrapped by hand, and an operation's prose lives in src/routes/*.md. A test's title is its sentence and
// stays whole.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { typescriptFiles } from '../helpers/source-files.js'

const WIDTH = 120
const TITLE = /^\s*(it|describe|test)(\.\w+)*\(/

describe('line length', () => {
  it('when a line of src, scripts or test is wider than 120 characters (a test title aside), then it is named', async () => {
    const wide: string[] = []
    for (const dir of ['src', 'scripts', 'test']) {
      for (const file of await typescriptFiles(dir)) {
        ;(await readFile(file, 'utf8')).split('\n').forEach((line, index) => {
          const width = [...line].length
          if (width > WIDTH && !TITLE.test(line)) wide.push(`${file}:${index + 1} is ${width} characters`)
        })
      }
    }
    expect(wide).toEqual([])
  })
})

// No two files of src import each other, directly or through others (type-only imports too): a reader can then read
// any file with what it needs already read, and a layer never reaches back up into the one that uses it.
import { readFile } from 'node:fs/promises'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'
import { typescriptFiles } from '../helpers/source-files.js'

const IMPORTED = /^\s*(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'/gm

/** Each file of src and the files of src it imports. */
async function importGraph(): Promise<Map<string, string[]>> {
  const graph = new Map<string, string[]>()
  for (const file of await typescriptFiles('src')) {
    const text = await readFile(file, 'utf8')
    const targets = [...text.matchAll(IMPORTED)].map((match) =>
      normalize(join(dirname(file), match[1]!.replace(/\.js$/, '.ts'))),
    )
    graph.set(file, targets)
  }
  return graph
}

/** The cycles of the graph, each once, as the strongly connected components of more than one file (Tarjan). */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (file: string) => {
    index.set(file, counter)
    low.set(file, counter++)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!))
    }
    if (low.get(file) !== index.get(file)) return
    const component: string[] = []
    for (let member = stack.pop(); member; member = stack.pop()) {
      onStack.delete(member)
      component.push(member)
      if (member === file) break
    }
    if (component.length > 1) found.push(component.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

describe('imports', () => {
  it('when files of src import each other, directly or around a circle, then the circle is named', async () => {
    const graph = await importGraph()
    expect(graph.get('src/app.ts')?.length).toBeGreaterThan(5)
    expect(cyclesOf(graph)).toEqual([])
  })
})

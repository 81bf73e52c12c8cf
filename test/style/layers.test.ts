// The house's layers: a module of src imports from its own layer or the ones below it, never from above, so that
// a reader (or a fork) can take a lower layer without what is built on it. Type-only imports count too: a type
// from above is a dependency on what is above. A directory of src not listed here (a fork's resource) is a domain.
import { readFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { typescriptFiles } from '../helpers/source-files.js'

/** Lowest first: each directory (or top-level module) of src, by layer. */
const LAYERS: { name: string; parts: string[] }[] = [
  { name: 'shapes', parts: ['schemas', 'problems', 'logger'] },
  { name: 'infrastructure', parts: ['config', 'db', 'observability'] },
  { name: 'boundaries', parts: ['processor', 'client'] },
  {
    name: 'domains',
    parts: [
      'accounts',
      'idempotency',
      'ledger',
      'events',
      'charges',
      'refunds',
      'payouts',
      'webhooks',
      'processor-events',
      'recovery',
    ],
  },
  { name: 'edges', parts: ['plugins', 'openapi', 'routes', 'worker', 'cli', 'app', 'server'] },
]
const DOMAINS = LAYERS.findIndex((layer) => layer.name === 'domains')

/** The part of src a file belongs to: its directory under src, or its own name for a module at src's top. */
function partOf(file: string): string {
  const [first, second] = relative('src', file).split('/')
  return second === undefined ? first!.replace(/\.ts$/, '') : first!
}

function layerOf(part: string): number {
  const found = LAYERS.findIndex((layer) => layer.parts.includes(part))
  return found === -1 ? DOMAINS : found
}

describe('the layers', () => {
  it('when a module of src imports another, then the other is in its layer or below', async () => {
    const upward: string[] = []
    for (const file of await typescriptFiles('src')) {
      const from = partOf(file)
      for (const [, target] of (await readFile(file, 'utf8')).matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const to = partOf(join(dirname(file), target!).replace(/\.js$/, '.ts'))
        if (layerOf(to) > layerOf(from))
          upward.push(`${file} (${LAYERS[layerOf(from)]!.name}) imports ${target} (${LAYERS[layerOf(to)]!.name})`)
      }
    }
    expect(upward).toEqual([])
  })

  it('when a part of src is listed, then it exists: the table names no directory that is gone', async () => {
    const parts = new Set((await typescriptFiles('src')).map(partOf))
    expect(LAYERS.flatMap((layer) => layer.parts).filter((part) => !parts.has(part))).toEqual([])
  })
})

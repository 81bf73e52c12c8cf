// Route prose lives in Markdown beside the routes (src/routes/*.md), read by the document builder: one place per
// operation, and a section that names no operation, or an operation described twice, stops the build.
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { openapiDocument, type DocumentedRoute } from '../../src/openapi/document.js'
import { operationProse } from '../../src/openapi/prose.js'
import { useTestApp } from '../helpers/app.js'

const suite = useTestApp()

const route = (operationId: string, description?: string): DocumentedRoute => ({
  method: 'GET',
  url: `/v1/${operationId}`,
  schema: {},
  doc: {
    operationId,
    tag: 'Charges',
    summary: operationId,
    ...(description !== undefined && { description }),
    responses: { 200: { description: 'Fine.' } },
  },
})

async function proseDir(files: Record<string, string>): Promise<URL> {
  const dir = await mkdtemp(join(tmpdir(), 'prose-'))
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text)
  return pathToFileURL(`${dir}/`)
}

describe('operation prose', () => {
  it('when a section is read, then its paragraphs keep their breaks and their lines join with a space', async () => {
    const prose = operationProse(
      await proseDir({ 'a.md': '# A page\n\nIntroduction.\n\n## first\n\nOne line\nand the next.\n\nA second one.\n' }),
    )
    expect(prose).toEqual(new Map([['first', 'One line and the next.\n\nA second one.']]))
  })

  it('when a section names no operation, or an operation is described in its route too, then the document is not built', async () => {
    const prose = operationProse(await proseDir({ 'a.md': '## ghost\n\nNobody.\n\n## real\n\nSomeone.\n' }))
    expect(() => openapiDocument([route('real')], prose)).toThrow(/describes operations no route has: ghost/)
    const twice = new Map([['real', 'Someone.']])
    expect(() => openapiDocument([route('real', 'Inline.')], twice)).toThrow(/described both/)
  })

  it('when the routes are built, then no operation carries its description inline: each is in src/routes/*.md', async () => {
    const document = (await suite.context.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { operationId: string; description?: string }>>
    }
    const prose = operationProse()
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods))
    const inline = operations.filter(
      (operation) => operation.description !== undefined && !prose.has(operation.operationId),
    )
    expect(inline.map((operation) => operation.operationId)).toEqual([])
  })
})

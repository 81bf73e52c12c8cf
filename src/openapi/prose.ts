// What each operation does, in prose: Markdown beside the routes (src/routes/<resource>.md, a `## operationId`
// section per operation), where it reads as a page and the route files stay code. The document builder
// (document.ts) takes each operation's description from here; a paragraph's lines are joined by spaces, and
// paragraphs by a blank line.
import { readdirSync, readFileSync } from 'node:fs'

const SECTION = /^## +(\S+) *$/m

/** Each operation's description, by operationId, from the Markdown files of `dir` (src/routes, or dist/routes). */
export function operationProse(dir: URL = new URL('../routes/', import.meta.url)): Map<string, string> {
  const files = readdirSync(dir).filter((name) => name.endsWith('.md'))
  // A build that did not copy them (npm run build does) would serve a document without its prose: say so at start.
  if (files.length === 0) throw new Error(`no operation prose (*.md) in ${dir.pathname}: npm run build copies it`)
  const prose = new Map<string, string>()
  for (const file of files) {
    // Before the first section: the page's title and introduction, for its reader only.
    const [, ...sections] = readFileSync(new URL(file, dir), 'utf8').split(SECTION)
    for (let index = 0; index < sections.length; index += 2) {
      const operationId = sections[index] ?? ''
      if (prose.has(operationId)) throw new Error(`${file}: operation ${operationId} is described twice`)
      prose.set(operationId, paragraphs(sections[index + 1] ?? ''))
    }
  }
  return prose
}

function paragraphs(markdown: string): string {
  return markdown
    .trim()
    .split(/\n\s*\n/)
    .map((paragraph) =>
      paragraph
        .split('\n')
        .map((line) => line.trim())
        .join(' '),
    )
    .join('\n\n')
}

// The template check's edits by structure (structure.ts): each kind lands where it belongs whatever the layout
// around it, a fork's reformatted or extended file takes the same edits, and what is gone is named. And every step
// of the checklist (steps.ts) applies to this repository's files as they are, leaving valid TypeScript.
import { readFile } from 'node:fs/promises'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { STEPS } from './steps.js'
import { applyStructuralEdit, MissingStructure, type StructuralEdit } from './structure.js'

const ROOT = new URL('../../', import.meta.url).pathname

/** Syntax errors of a TypeScript text (what a bad insertion would make). */
function syntaxErrors(text: string): string[] {
  const source = ts.createSourceFile('edited.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const program = ts.createProgram({ rootNames: [], options: {} })
  return (program.getSyntacticDiagnostics(source) as readonly ts.Diagnostic[]).map((each) =>
    ts.flattenDiagnosticMessageText(each.messageText, '\n'),
  )
}
const edit = (text: string, change: StructuralEdit) => applyStructuralEdit('file.ts', text, change)

describe('applyStructuralEdit', () => {
  it('when a property is added to an object, then it follows the last one, with or without a trailing comma, on one line or many', () => {
    const many = "export const ID_PREFIXES = {\n  ChargeId: 'ch',\n  RefundId: 're',\n} as const\n"
    expect(edit(many, { kind: 'property', of: 'ID_PREFIXES', text: "WithdrawalId: 'wdr'" })).toBe(
      "export const ID_PREFIXES = {\n  ChargeId: 'ch',\n  RefundId: 're',\n  WithdrawalId: 'wdr',\n} as const\n",
    )
    const one = "export const ID_PREFIXES = { ChargeId: 'ch', RefundId: 're' } as const\n"
    expect(edit(one, { kind: 'property', of: 'ID_PREFIXES', text: "WithdrawalId: 'wdr'" })).toBe(
      "export const ID_PREFIXES = { ChargeId: 'ch', RefundId: 're', WithdrawalId: 'wdr' } as const\n",
    )
  })

  it('when the object is one of several in a function, then `besides` picks the one that has that property', () => {
    const text =
      'export function make() {\n  const options = { a: 1 }\n  return {\n    charge: () => 1,\n    refund: () => ' +
      '2,\n  }\n}\n'
    expect(edit(text, { kind: 'property', of: 'make', besides: 'refund', text: 'withdrawal: () => 3' })).toContain(
      '    refund: () => 2,\n    withdrawal: () => 3,\n  }',
    )
  })

  it('when an element, a member, a case, a statement, a declaration or an import is added, then each is where it belongs', () => {
    const text = [
      "import { a } from './a.js'",
      "import type { B } from './b.js'",
      '',
      "export const METHODS = ['charge', 'refund'] as const satisfies readonly string[]",
      'interface Operations {',
      '  charge: number',
      '}',
      '/** The kinds. */',
      'export function lookup(kind: string) {',
      '  switch (kind) {',
      "    case 'charge':",
      '      return 1',
      '    // anything else',
      '    default:',
      '      return 0',
      '  }',
      '}',
      'async function plugin(v1: { register(routes: unknown, options: object): Promise<void> }) {',
      '  await v1.register(chargeRoutes, {})',
      '  await v1.register(refundRoutes, {})',
      '}',
      '',
    ].join('\n')
    let edited = edit(text, { kind: 'element', of: 'METHODS', text: "'withdrawal'" })
    edited = edit(edited, { kind: 'member', of: 'Operations', text: 'withdrawal: string' })
    edited = edit(edited, { kind: 'case', of: 'lookup', text: "    case 'withdrawal':\n      return 2" })
    edited = edit(edited, {
      kind: 'statement',
      after: { call: 'register', argument: 'refundRoutes' },
      text: 'await v1.register(withdrawalRoutes, {})',
    })
    edited = edit(edited, { kind: 'before', of: 'lookup', text: 'const WITHDRAWAL = 2' })
    edited = edit(edited, { kind: 'import', from: './b.js', names: ['type C'] })
    edited = edit(edited, { kind: 'import', from: './withdrawal.js', names: ['withdrawalRoutes'] })
    edited = edit(edited, { kind: 'export', from: './withdrawal.js', names: ['Withdrawal'] })
    expect(edited).toContain("['charge', 'refund', 'withdrawal'] as const")
    expect(edited).toContain('  charge: number\n  withdrawal: string\n}')
    expect(edited).toContain(
      "      return 1\n    case 'withdrawal':\n      return 2\n    // anything else\n    default:",
    )
    expect(edited).toContain('  await v1.register(refundRoutes, {})\n  await v1.register(withdrawalRoutes, {})\n}')
    expect(edited).toContain('const WITHDRAWAL = 2\n/** The kinds. */\nexport function lookup')
    expect(edited).toContain(
      "import type { B, C } from './b.js'\nimport { withdrawalRoutes } from './withdrawal.js'\n" +
        "export type { Withdrawal } from './withdrawal.js'\n",
    )
    expect(syntaxErrors(edited)).toEqual([])
  })

  it('when a fork reformatted the file and added its own members, then the same edit lands, and the file stays valid', () => {
    const fork =
      "export const PROCESSOR_METHODS = [\n  'charge',\n  'transfer', // the fork's own\n  'lookup',\n] as const\n"
    const edited = edit(fork, { kind: 'element', of: 'PROCESSOR_METHODS', text: "'withdrawal'" })
    expect(edited).toBe(
      "export const PROCESSOR_METHODS = [\n  'charge',\n  'transfer', // the fork's own\n  'lookup',\n  " +
        "'withdrawal',\n] as const\n",
    )
    expect(syntaxErrors(edited)).toEqual([])
  })

  it('when what an edit adds to is gone, then it says what it looked for, by name', () => {
    expect(() => edit('const x = 1\n', { kind: 'property', of: 'ID_PREFIXES', text: 'a: 1' })).toThrow(MissingStructure)
    expect(() => edit('const x = 1\n', { kind: 'property', of: 'ID_PREFIXES', text: 'a: 1' })).toThrow(
      'file.ts has no declaration named ID_PREFIXES',
    )
    expect(() =>
      edit('function f() { return {} }\n', {
        kind: 'statement',
        after: { call: 'register', argument: 'refundRoutes' },
        text: 'x()',
      }),
    ).toThrow('no call register(refundRoutes, …)')
  })
})

describe('the checklist (steps.ts) on this repository', () => {
  it('when every step is applied to the files as they are, then every edit finds its place and each file stays valid TypeScript', async () => {
    const files = new Map<string, string>()
    for (const step of STEPS) {
      for (const { file, ...change } of step.edits ?? []) {
        const text = files.get(file) ?? (await readFile(`${ROOT}${file}`, 'utf8'))
        files.set(file, applyStructuralEdit(file, text, change))
      }
    }
    expect(files.size).toBeGreaterThan(8)
    for (const [file, text] of files) expect(syntaxErrors(text), file).toEqual([])
  })
})

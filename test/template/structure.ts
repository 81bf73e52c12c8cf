// Edits to a TypeScript file by its structure, not its text: "add this property to the object ID_PREFIXES", "this
// member to the interface Operations", "this statement after the call that registers refundRoutes". The template
// check (check.ts) applies a forker's checklist with them, so that a fork that reformatted a file, added members of
// its own or moved things around still gets the same edits; only a declaration that is gone stops it, by name.
import ts from 'typescript'

export type StructuralEdit =
  /** Named imports from a module: merged into its import, or a new import after the last one. */
  | { kind: 'import'; from: string; names: string[] }
  /** Types re-exported from a module, after the file's last import or re-export. */
  | { kind: 'export'; from: string; names: string[] }
  /** A property of the object literal inside the declaration `of` (the one that has property `besides`, if given). */
  | { kind: 'property'; of: string; besides?: string; text: string }
  /** An element of the array literal inside the declaration `of`. */
  | { kind: 'element'; of: string; text: string }
  /** A member of the interface (or object type) `of`. */
  | { kind: 'member'; of: string; text: string }
  /** A case of the switch inside the declaration `of`, before its default. */
  | { kind: 'case'; of: string; text: string }
  /** A statement after the one that calls `<something>.<call>(<argument>, …)`. */
  | { kind: 'statement'; after: { call: string; argument: string }; text: string }
  /** Declarations before the top-level declaration `of`, and its comment. */
  | { kind: 'before'; of: string; text: string }
  /** Text at the end of the file. */
  | { kind: 'append'; text: string }

export class MissingStructure extends Error {
  override name = 'MissingStructure'
}

/** Applies one edit to a file's text; throws MissingStructure, naming what it looked for, when the file lacks it. */
export function applyStructuralEdit(file: string, text: string, edit: StructuralEdit): string {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const missing = (what: string) => new MissingStructure(`${file} has no ${what}`)
  const insert = (at: number, added: string) => text.slice(0, at) + added + text.slice(at)
  switch (edit.kind) {
    case 'import': {
      const imports = source.statements.filter(ts.isImportDeclaration)
      const clause = imports.find((each) => (each.moduleSpecifier as ts.StringLiteral).text === edit.from)?.importClause
      const named = clause?.namedBindings
      // `import type { … }` takes names without their own `type`.
      const names = clause?.isTypeOnly ? edit.names.map((name) => name.replace(/^type /, '')) : edit.names
      if (named && ts.isNamedImports(named)) return insertInList(text, source, named.elements, named, names.join(', '))
      const last = imports.at(-1)
      const line = `import { ${edit.names.join(', ')} } from '${edit.from}'\n`
      return last ? insert(lineEnd(text, last.end), line) : line + text
    }
    case 'export': {
      const last = source.statements
        .filter((each) => ts.isImportDeclaration(each) || (ts.isExportDeclaration(each) && each.moduleSpecifier))
        .at(-1)
      const line = `export type { ${edit.names.join(', ')} } from '${edit.from}'\n`
      return last ? insert(lineEnd(text, last.end), line) : line + text
    }
    case 'property': {
      const declaration = declarationNamed(source, edit.of) ?? throwing(missing(`declaration named ${edit.of}`))
      const literal =
        find(
          declaration,
          (node): node is ts.ObjectLiteralExpression =>
            ts.isObjectLiteralExpression(node) &&
            (!edit.besides || node.properties.some((each) => nameOf(each) === edit.besides)),
        ) ?? throwing(missing(`object literal in ${edit.of}${edit.besides ? ` with a property ${edit.besides}` : ''}`))
      return insertInList(text, source, literal.properties, literal, edit.text)
    }
    case 'element': {
      const declaration = declarationNamed(source, edit.of) ?? throwing(missing(`declaration named ${edit.of}`))
      const array = find(declaration, ts.isArrayLiteralExpression) ?? throwing(missing(`array literal in ${edit.of}`))
      return insertInList(text, source, array.elements, array, edit.text)
    }
    case 'member': {
      const declaration = declarationNamed(source, edit.of) ?? throwing(missing(`interface or type named ${edit.of}`))
      const members = ts.isInterfaceDeclaration(declaration)
        ? declaration.members
        : find(declaration, ts.isTypeLiteralNode)?.members
      if (!members) throw missing(`members in ${edit.of}`)
      const last = members.at(-1)
      if (!last) throw missing(`member in ${edit.of} to add beside`)
      return insert(last.end, `\n${indentOf(text, last.getStart(source))}${edit.text}`)
    }
    case 'case': {
      const declaration = declarationNamed(source, edit.of) ?? throwing(missing(`declaration named ${edit.of}`))
      const switched = find(declaration, ts.isSwitchStatement) ?? throwing(missing(`switch in ${edit.of}`))
      const fallback =
        switched.caseBlock.clauses.find(ts.isDefaultClause) ??
        throwing(missing(`default case in the switch of ${edit.of}`))
      return insert(leadingLineStart(text, fallback), `${edit.text}\n`)
    }
    case 'statement': {
      const call =
        find(
          source,
          (node): node is ts.CallExpression =>
            ts.isCallExpression(node) &&
            calleeName(node) === edit.after.call &&
            node.arguments[0]?.getText(source) === edit.after.argument,
        ) ?? throwing(missing(`call ${edit.after.call}(${edit.after.argument}, …)`))
      let statement: ts.Node = call
      while (!ts.isExpressionStatement(statement) && statement.parent) statement = statement.parent
      return insert(statement.end, `\n${indentOf(text, statement.getStart(source))}${edit.text}`)
    }
    case 'before': {
      const declaration =
        source.statements.find((statement) => declaredNames(statement).includes(edit.of)) ??
        throwing(missing(`top-level declaration named ${edit.of}`))
      return insert(leadingLineStart(text, declaration), `${edit.text}\n`)
    }
    case 'append':
      return `${text.replace(/\n*$/, '\n')}\n${edit.text}`
  }
}

/** Adds an item to a comma-separated list (properties, elements, named imports), keeping its layout. */
function insertInList(
  text: string,
  source: ts.SourceFile,
  items: ts.NodeArray<ts.Node>,
  container: ts.Node,
  added: string,
): string {
  const last = items.at(-1)
  if (!last) {
    const open = container.getStart(source) + 1
    return `${text.slice(0, open)} ${added} ${text.slice(open)}`
  }
  const multiline =
    text.slice(items[0]!.getStart(source), last.end).includes('\n') ||
    text.slice(container.getStart(source), items[0]!.getStart(source)).includes('\n')
  const separator = multiline ? `\n${indentOf(text, last.getStart(source))}` : ' '
  // With a trailing comma the new item takes one too; without, the comma goes before it.
  return items.hasTrailingComma
    ? text.slice(0, lineEndAfterComma(text, last.end)) +
        `${separator}${added},` +
        text.slice(lineEndAfterComma(text, last.end))
    : `${text.slice(0, last.end)},${separator}${added}${text.slice(last.end)}`
}

function lineEndAfterComma(text: string, at: number): number {
  return text.indexOf(',', at) + 1
}

function declarationNamed(source: ts.SourceFile, name: string): ts.Node | undefined {
  return find(source, (node): node is ts.Node => {
    if (
      ts.isVariableDeclaration(node) ||
      ts.isFunctionDeclaration(node) ||
      ts.isInterfaceDeclaration(node) ||
      ts.isTypeAliasDeclaration(node) ||
      ts.isClassDeclaration(node)
    ) {
      return node.name?.getText(source) === name
    }
    if (ts.isMethodDeclaration(node) || ts.isPropertyAssignment(node)) return node.name.getText(source) === name
    return false
  })
}

function declaredNames(statement: ts.Statement): string[] {
  if (ts.isVariableStatement(statement))
    return statement.declarationList.declarations.map((each) => each.name.getText())
  if (
    (ts.isFunctionDeclaration(statement) ||
      ts.isInterfaceDeclaration(statement) ||
      ts.isTypeAliasDeclaration(statement) ||
      ts.isClassDeclaration(statement)) &&
    statement.name
  ) {
    return [statement.name.text]
  }
  return []
}

function nameOf(member: ts.ObjectLiteralElementLike): string | undefined {
  return member.name && (ts.isIdentifier(member.name) || ts.isStringLiteral(member.name)) ? member.name.text : undefined
}

function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text
  return ts.isIdentifier(callee) ? callee.text : undefined
}

/** The first node under `root` (depth first, in source order) that `test` accepts. */
function find<T extends ts.Node>(root: ts.Node, test: (node: ts.Node) => node is T): T | undefined {
  let found: T | undefined
  const visit = (node: ts.Node) => {
    if (found) return
    if (test(node)) found = node
    else ts.forEachChild(node, visit)
  }
  ts.forEachChild(root, visit)
  return found
}

function throwing(error: Error): never {
  throw error
}

function indentOf(text: string, at: number): string {
  const start = text.lastIndexOf('\n', at - 1) + 1
  return /^[ \t]*/.exec(text.slice(start))![0]
}

/** Where the line of a node's first leading comment (or of the node itself) begins. */
function leadingLineStart(text: string, node: ts.Node): number {
  const full = node.getFullStart()
  const firstContent = full + text.slice(full).search(/\S/)
  return text.lastIndexOf('\n', firstContent - 1) + 1
}

function lineEnd(text: string, at: number): number {
  const end = text.indexOf('\n', at)
  return end < 0 ? text.length : end + 1
}

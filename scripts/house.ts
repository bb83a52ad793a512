/**
 * `npm run house`: the house checks that read the code, listed (exit 1 when any does not hold):
 *
 * - no file in src/, plugins/ or assembly/ over {@link MAX_FILE_LINES} lines (a longer one holds two concerns);
 * - no function or class in src/ or plugins/ over {@link MAX_DEFINITION_LINES} lines, nested ones
 *   included (one that long is several steps, or several concerns, in one place). The
 *   AssemblyScript kernels are held to the file limit only: each is one pass over a series, and
 *   its TypeScript twin (src/kernels/reference/) spells the same steps out in shorter functions;
 * - no import of effect's index modules (`effect`, `effect/sql`, `effect/http`, …) in src/ or
 *   plugins/: an index loads every module of its folder, which every process and thread of the
 *   service then pays for at start; `import * as Effect from "effect/Effect"` loads what is used;
 * - no circle in the import graph of src/, plugins/ and bench/ (two files that need each other are
 *   one concern split badly, or a type in the wrong room). Type-only imports and re-exports count.
 *
 * Read with TypeScript's own parser and pre-processor, so every form of function and import counts.
 * test/docs/house.test.ts runs the same checks.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import ts from "typescript"

export const ROOT = resolve(import.meta.dirname, "..")
export const MAX_FILE_LINES = 400
export const MAX_DEFINITION_LINES = 120

/** The .ts files under `dir`, tests and declarations left out. */
export const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sources(path)
    return name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts") ? [path] : []
  })

const lineCount = (path: string) => readFileSync(path, "utf8").split("\n").length - 1

/** Files over the limit, as `path: lines`. */
export const longFiles = (files: ReadonlyArray<string>, limit = MAX_FILE_LINES): ReadonlyArray<string> =>
  files.filter((f) => lineCount(f) > limit).map((f) => `${relative(ROOT, f)}: ${lineCount(f)} lines`)

/** A readable name of a function or class node: its own name, or the variable, property or method it is assigned to. */
const nameOf = (node: ts.Node, source: ts.SourceFile): string => {
  const named = (node as { name?: ts.Node }).name
  if (named !== undefined) return named.getText(source)
  const parent = node.parent
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText(source)
  if (ts.isCallExpression(parent)) return `(callback of ${parent.expression.getText(source).slice(0, 40)})`
  return "(anonymous)"
}

/** Functions (of every form) and classes longer than `limit` lines in `text`, outermost first: `line name lines`. */
export const longDefinitionsIn = (fileName: string, text: string, limit = MAX_DEFINITION_LINES): ReadonlyArray<{ readonly line: number; readonly name: string; readonly lines: number }> => {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<{ line: number; name: string; lines: number }> = []
  const visit = (node: ts.Node, enclosing: number) => {
    let inner = enclosing
    if (ts.isFunctionLike(node) || ts.isClassLike(node)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line
      // A function's span runs from its first line to its closing line, both counted.
      const lines = end - start + 1
      // A callback that is nearly all of a listed definition (`const f = () => Effect.gen(function*() {…})`) is that definition.
      if (lines > limit && enclosing - lines > 10) found.push({ line: start + 1, name: nameOf(node, source), lines })
      inner = lines
    }
    ts.forEachChild(node, (child) => visit(child, inner))
  }
  visit(source, Number.POSITIVE_INFINITY)
  return found
}

/** Every definition over the limit in `files`, as `path:line name (lines)`. */
export const longDefinitions = (files: ReadonlyArray<string>, limit = MAX_DEFINITION_LINES): ReadonlyArray<string> =>
  files.flatMap((f) => longDefinitionsIn(f, readFileSync(f, "utf8"), limit).map((d) => `${relative(ROOT, f)}:${d.line} ${d.name}: ${d.lines} lines`))

/** file → the files of the graph it imports (relative specifiers only: packages are not ours). */
export const importGraph = (files: ReadonlyArray<string>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const known = new Set(files)
  return new Map(files.map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
    const targets = importedFiles.map((f) => f.fileName).filter((s) => s.startsWith(".")).map((s) => resolve(dirname(file), s)).filter((t) => known.has(t))
    return [file, [...new Set(targets)]]
  }))
}

/** The circles of a graph: its strongly connected components of more than one node, or a node importing itself (Tarjan 1972). */
export const circles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<ReadonlyArray<string>> = []
  const visit = (v: string) => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!))
      }
    }
    if (low.get(v) !== index.get(v)) return
    const component: Array<string> = []
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w)
      component.push(w)
      if (w === v) break
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort())
  }
  for (const v of graph.keys()) if (!index.has(v)) visit(v)
  return found
}

/** A module specifier naming one of effect's index modules: the package itself or one of its folders (`effect/sql`). */
const EFFECT_INDEX = /^effect(\/[a-z][a-z-]*)?$/

/** Every import of one of effect's index modules in `files`, as `path: specifier`. */
export const indexImports = (files: ReadonlyArray<string>): ReadonlyArray<string> =>
  files.flatMap((f) =>
    ts.preProcessFile(readFileSync(f, "utf8"), true, true).importedFiles.filter((i) => EFFECT_INDEX.test(i.fileName)).map((i) => `${relative(ROOT, f)}: ${i.fileName}`)
  )

/** Every check, by name: what does not hold (empty when it holds). */
export const houseChecks = (): Record<string, ReadonlyArray<string>> => {
  const code = ["src", "plugins", "assembly"].flatMap((d) => sources(join(ROOT, d)))
  const graph = importGraph(["src", "plugins", "bench"].flatMap((d) => sources(join(ROOT, d))))
  return {
    [`files over ${MAX_FILE_LINES} lines`]: longFiles(code),
    [`functions and classes over ${MAX_DEFINITION_LINES} lines`]: longDefinitions(code.filter((f) => !f.includes("/assembly/"))),
    "imports of effect's index modules": indexImports(code.filter((f) => !f.includes("/assembly/"))),
    "import circles": circles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(" → "))
  }
}

if (import.meta.main) {
  let failed = false
  for (const [check, problems] of Object.entries(houseChecks())) {
    console.log(`${problems.length === 0 ? "ok  " : "FAIL"} ${check}${problems.length === 0 ? "" : `: ${problems.length}`}`)
    for (const p of problems) console.log(`     ${p}`)
    failed ||= problems.length > 0
  }
  process.exitCode = failed ? 1 : 0
}

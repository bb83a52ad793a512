/**
 * The import graph of the service's own code (src/, plugins/, bench/) has no circle, type-only
 * imports and re-exports included: a file's place says what it may use, and two files that need
 * each other are one concern split badly (or a type in the wrong room). Read with TypeScript's own
 * pre-processor, so every form of import and export counts.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

/** The .ts files under `dir`, tests left out (they may import anything). */
const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sources(path)
    return name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts") ? [path] : []
  })

/** file → the files of the graph it imports (relative specifiers only: packages are not ours). */
const importGraph = (): ReadonlyMap<string, ReadonlyArray<string>> => {
  const files = ["src", "plugins", "bench"].flatMap((d) => sources(join(ROOT, d)))
  const known = new Set(files)
  return new Map(files.map((file) => {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true)
    const targets = importedFiles.map((f) => f.fileName).filter((s) => s.startsWith(".")).map((s) => resolve(dirname(file), s)).filter((t) => known.has(t))
    return [file, [...new Set(targets)]]
  }))
}

/** The circles of a graph: its strongly connected components of more than one file, or a file importing itself (Tarjan 1972). */
const circles = (graph: ReadonlyMap<string, ReadonlyArray<string>>): ReadonlyArray<ReadonlyArray<string>> => {
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

describe("the import graph", () => {
  it("finds a circle when there is one", () => {
    const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])
    expect(circles(graph)).toEqual([["a", "b", "c"]])
  })

  it("of src/, plugins/ and bench/ has no circle, type imports included", () => {
    const graph = importGraph()
    expect(graph.size).toBeGreaterThan(200)
    expect(circles(graph).map((c) => c.map((f) => relative(ROOT, f)))).toEqual([])
  })
})

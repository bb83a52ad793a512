/**
 * The house checks of scripts/house.ts (`npm run house` lists what does not hold): no source file
 * over 400 lines, no import circle, no function or class over 120 lines, and no import of effect's
 * index modules (each loads its whole folder at every start).
 */
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { circles, importGraph, indexImports, longDefinitions, longDefinitionsIn, longFiles, MAX_DEFINITION_LINES, ROOT, sources } from "../../scripts/house.ts"

const code = () => ["src", "plugins", "assembly"].flatMap((d) => sources(join(ROOT, d)))

describe("the house", () => {
  it("finds a circle when there is one", () => {
    const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]])
    expect(circles(graph)).toEqual([["a", "b", "c"]])
  })

  it("of src/, plugins/ and bench/ has no import circle, type imports included", () => {
    const graph = importGraph(["src", "plugins", "bench"].flatMap((d) => sources(join(ROOT, d))))
    expect(graph.size).toBeGreaterThan(200)
    expect(circles(graph).map((c) => c.map((f) => relative(ROOT, f)))).toEqual([])
  })

  it("no source file in src/, plugins/ or assembly/ is over 400 lines", () => {
    expect(code().length).toBeGreaterThan(100)
    expect(longFiles(code())).toEqual([])
  })

  it("finds a long function in any form, nested ones included, and not a callback that is all of one", () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const x${i} = ${i}`).join("\n")
    const text = [
      `export const outer = (a: number) => Effect.gen(function*() {\n${body(150)}\n})`,
      `class Big {\n  method() {\n${body(130)}\n  }\n  other() {\n${body(20)}\n  }\n}`,
      `function small() {\n${body(10)}\n}`,
      `const host = () => {\n${body(20)}\n  const inner = () => {\n${body(125)}\n  }\n${body(20)}\n}`
    ].join("\n")
    expect(longDefinitionsIn("t.ts", text).map((d) => d.name)).toEqual(["outer", "Big", "method", "host", "inner"])
  })

  it(`no function or class in src/ or plugins/ is over ${MAX_DEFINITION_LINES} lines`, () => {
    expect(longDefinitions(code().filter((f) => !f.includes("/assembly/")))).toEqual([])
  })

  it("src/ and plugins/ import effect module by module, not through its index modules", () => {
    const files = code().filter((f) => !f.includes("/assembly/"))
    expect(indexImports(files)).toEqual([])
    // The scaffold's template imports `effect` as a user's plugin would: it is text, not an import.
    expect(readFileSync(join(ROOT, "src/plugin/scaffold.ts"), "utf8")).toContain(`from "effect"`)
  })
})

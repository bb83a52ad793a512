/**
 * Sizes the house keeps: no source file in src/, plugins/ or assembly/ over 400 lines (a longer one
 * holds two concerns), and docs/benchmarks.md at most 300 (one current table per bench; history
 * lives in git).
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

const lines = (path: string) => readFileSync(path, "utf8").split("\n").length - 1

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sources(path)
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : []
  })

describe("the house's sizes", () => {
  it("no source file in src/, plugins/ or assembly/ is over 400 lines", () => {
    const files = ["src", "plugins", "assembly"].flatMap((d) => sources(join(ROOT, d)))
    expect(files.length).toBeGreaterThan(100)
    expect(files.filter((f) => lines(f) > 400).map((f) => `${relative(ROOT, f)}: ${lines(f)}`)).toEqual([])
  })

  it("docs/benchmarks.md is at most 300 lines", () => {
    expect(lines(join(ROOT, "docs/benchmarks.md"))).toBeLessThanOrEqual(300)
  })
})

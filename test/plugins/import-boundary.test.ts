/**
 * One door for every plugin: a file under plugins/ may import other files of plugins/, npm packages
 * (effect and the rest), Node's built-ins, and from the platform only the plugin contract's three
 * entries (src/plugin/Plugin.ts, src/plugin/contract.ts and src/plugin/experimental.ts, the
 * package's `./plugin`, `./plugin/contract` and `./plugin/experimental`). Anything else from src/
 * fails here.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

const CONTRACT = new Set(["Plugin.ts", "contract.ts", "experimental.ts"].map((f) => resolve(ROOT, "src/plugin", f)))
const ENTRIES = new Set(["hcc-medical-intelligence/plugin", "hcc-medical-intelligence/plugin/contract", "hcc-medical-intelligence/plugin/experimental"])
const PLUGINS = resolve(ROOT, "plugins")

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

/** Every module specifier a file imports or re-exports (static and dynamic). */
export const specifiers = (source: string): Array<string> => [
  ...source.matchAll(/^\s*(?:import|export)\b[^"'`;]*?\bfrom\s*["']([^"']+)["']/gm),
  ...source.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
  ...source.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)
].map((m) => m[1]!)

/** Why an import crosses the boundary, or undefined when it may. */
export const violation = (file: string, specifier: string): string | undefined => {
  if (!specifier.startsWith(".") && !specifier.startsWith("/")) {
    return specifier.startsWith("hcc-medical-intelligence") && !ENTRIES.has(specifier) ? "only the ./plugin, ./plugin/contract and ./plugin/experimental entries of the package" : undefined
  }
  const target = resolve(dirname(file), specifier)
  if (CONTRACT.has(target)) return undefined
  if (target.startsWith(PLUGINS + "/")) return undefined
  return `reaches ${relative(ROOT, target)}, past the plugin contract`
}

describe("the plugin import boundary", () => {
  it("every file under plugins/ imports from the platform only the contract", () => {
    const found: Array<string> = []
    for (const file of files(PLUGINS)) {
      for (const s of specifiers(readFileSync(file, "utf8"))) {
        const why = violation(file, s)
        if (why !== undefined) found.push(`${relative(ROOT, file)}: "${s}" ${why}`)
      }
    }
    expect(found).toEqual([])
  })

  it("catches what it should (a calendar import, a kernel twin, a deep package path) and lets the rest pass", () => {
    const file = join(PLUGINS, "clinical/handler.ts")
    expect(violation(file, "../../src/health/calendar.ts")).toMatch(/past the plugin contract/)
    expect(violation(file, "../../src/kernels/reference/trajectory.ts")).toMatch(/past the plugin contract/)
    expect(violation(file, "hcc-medical-intelligence/src/synthetic/truths.ts")).toBeDefined()
    expect(violation(file, "../../src/plugin/Plugin.ts")).toBeUndefined()
    expect(violation(file, "../../src/plugin/experimental.ts")).toBeUndefined()
    expect(violation(file, "../../src/plugin/contract.ts")).toBeUndefined()
    expect(violation(file, "../../src/plugin/spec.ts")).toMatch(/past the plugin contract/)
    expect(violation(file, "../../src/plugin/cache.ts")).toMatch(/past the plugin contract/)
    expect(violation(file, "hcc-medical-intelligence/plugin/experimental")).toBeUndefined()
    expect(violation(file, "./understand.ts")).toBeUndefined()
    expect(violation(file, "../temporal/schema.ts")).toBeUndefined()
    expect(violation(file, "effect")).toBeUndefined()
    expect(violation(file, "node:crypto")).toBeUndefined()
    expect(specifiers(`import { a } from "../../src/x.ts"\nexport { b } from './y.ts'\nconst m = await import("../z.ts")\nimport type {\n  C\n} from "../../src/w.ts"`))
      .toEqual(["../../src/x.ts", "./y.ts", "../../src/w.ts", "../z.ts"])
  })
})

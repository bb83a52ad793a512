/**
 * `npm run test:quick` (vitest.quick.config.ts) runs files that exist, each a file of the full run,
 * and the README says what it is beside `npm test`.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { QUICK_FILES } from "../../vitest.quick.config.ts"
import { ROOT } from "../support/server.ts"

describe("npm run test:quick", () => {
  it("names files that exist, each under the full run's test folders, this one among them", () => {
    expect(QUICK_FILES.filter((f) => !existsSync(join(ROOT, f)))).toEqual([])
    expect(QUICK_FILES.filter((f) => !/^(test|plugins)\/.+\.test\.ts$/.test(f))).toEqual([])
    expect(QUICK_FILES).toContain("test/docs/test-quick.test.ts")
    expect(new Set(QUICK_FILES).size).toBe(QUICK_FILES.length)
  })

  it("is a script of the package, and the README tells it from the whole suite", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }
    expect(pkg.scripts["test:quick"]).toBe("npm run build && vitest run --config vitest.quick.config.ts")
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain("npm run test:quick")
  })
})

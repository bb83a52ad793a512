/**
 * `npm run build`'s steps skip what is up to date (scripts/upToDate.ts): an output is up to date
 * when it exists and no input, in any folder below one, was modified after it.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { filesUnder, isUpToDate } from "../../scripts/upToDate.ts"

/** A file at `path` modified at `seconds` after the epoch. */
const fileAt = (path: string, seconds: number): string => {
  writeFileSync(path, "x")
  utimesSync(path, seconds, seconds)
  return path
}

describe("isUpToDate", () => {
  const dir = mkdtempSync(join(tmpdir(), "hcc-up-to-date-"))
  mkdirSync(join(dir, "src/deep"), { recursive: true })
  const inputs = [join(dir, "src"), fileAt(join(dir, "config.json"), 1_000)]
  fileAt(join(dir, "src/a.ts"), 1_000)
  const nested = fileAt(join(dir, "src/deep/b.ts"), 1_000)
  const output = join(dir, "out.wasm")

  it("is false while the output does not exist", () => {
    expect(isUpToDate(output, inputs)).toBe(false)
  })

  it("is true once the output is as new as every input, files in folders below included", () => {
    fileAt(output, 1_000)
    expect(filesUnder(join(dir, "src")).length).toBe(2)
    expect(isUpToDate(output, inputs)).toBe(true)
    utimesSync(output, 2_000, 2_000)
    expect(isUpToDate(output, inputs)).toBe(true)
  })

  it("is false when any input, however deep, was modified after the output; an input that does not exist counts for nothing", () => {
    utimesSync(nested, 3_000, 3_000)
    expect(isUpToDate(output, inputs)).toBe(false)
    utimesSync(nested, 1_000, 1_000)
    expect(isUpToDate(output, [...inputs, join(dir, "missing")])).toBe(true)
  })
})

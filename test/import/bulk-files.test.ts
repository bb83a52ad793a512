/** Reading bulk files in parts: every line once, in order, with its number; problems placed by the file's line. */
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type BulkFile, forEachLines, partsOf } from "../../src/formats/fhir/bulkFiles.ts"
import { Report } from "../../src/pipeline/Report.ts"
import { tempDataDir } from "../support/server.ts"

const lines = Array.from({ length: 500 }, (_, i) => (i % 37 === 5 ? "" : JSON.stringify({ resourceType: "Observation", id: `o${i}`, pad: "x".repeat(i % 90) })))
const file = (): BulkFile => {
  const path = join(tempDataDir(), "Observation.ndjson")
  const text = lines.join("\n") + "\n"
  writeFileSync(path, text)
  return { path, name: "Observation.ndjson", type: "Observation", gzip: false, bytes: Buffer.byteLength(text) }
}

describe("a bulk file read in parts", () => {
  it("splits at line starts, and the parts together give every line once, in order", async () => {
    const f = file()
    const parts = partsOf(f, 4096)
    expect(parts.length).toBeGreaterThan(5)
    expect(parts[0]!.start).toBe(0)
    expect(parts.at(-1)!.end).toBe(f.bytes)
    const got: Array<string> = []
    const counts: Array<number> = []
    for (const part of parts) {
      const seen: Array<string> = []
      const n = await Effect.runPromise(forEachLines(f, (piece, first) => Effect.sync(() => {
        expect(first).toBe(seen.length + 1)
        seen.push(...piece)
      }), () => {}, part))
      expect(n).toBe(seen.length)
      counts.push(n)
      got.push(...seen)
    }
    expect(got).toEqual(lines)
    // A place in a part is written with the file's line once the parts before it are counted.
    const report = new Report()
    counts.forEach((n, p) => report.setPartLines(f.name, p, n))
    report.problem({ name: f.name, part: 3, line: 2 }, "Observation.subject", "is required")
    expect(report.problems).toEqual([`Observation.ndjson:${counts[0]! + counts[1]! + counts[2]! + 2}: Observation.subject: is required`])
  })

  it("reads a small or gzip'd file whole", () => {
    const f = file()
    expect(partsOf(f)).toEqual([{ part: 0, start: 0, end: f.bytes }])
    expect(partsOf({ ...f, gzip: true }, 10)).toEqual([{ part: 0, start: 0, end: f.bytes }])
  })
})

/**
 * Where a FHIR import reads its files: on parse threads, one per core, or, for a small export, on
 * the importing thread alone (starting the threads would cost more than they save). `--threads`
 * chooses; the dataset is the same either way, and the summary says which it was.
 */
import { describe, expect, it } from "vitest"
import { join } from "node:path"
import { writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { datasetDigest } from "../support/datasets.ts"
import { hcc, tryHcc, tempDataDir } from "../support/server.ts"

const importInto = (bulk: string, ...args: ReadonlyArray<string>) => {
  const dataDir = tempDataDir()
  const summary = JSON.parse(hcc(dataDir, ["data", "import", "--format", "fhir", bulk, "--json", ...args])) as Record<string, any>
  return { dataDir, summary }
}

describe("a FHIR import's parse threads", () => {
  it("a small export is read on the importing thread; --threads reads it on threads, to the same dataset", () => {
    const bulk = writeEhrExport(join(tempDataDir(), "bulk"))
    const inline = importInto(bulk)
    expect(inline.summary.parse_threads).toBe(0)
    const threaded = importInto(bulk, "--threads", "2")
    expect(threaded.summary.parse_threads).toBe(2)
    expect(threaded.summary.rows).toEqual(inline.summary.rows)
    expect(threaded.summary.read).toEqual(inline.summary.read)
    expect(datasetDigest(threaded.dataDir)).toBe(datasetDigest(inline.dataDir))
    // auto is the default.
    expect(importInto(bulk, "--threads", "auto").summary.parse_threads).toBe(0)
  })

  it("--threads takes auto or 0 to 99, and only with --format fhir", () => {
    const bulk = writeEhrExport(join(tempDataDir(), "bulk"))
    const wrong = tryHcc(tempDataDir(), ["data", "import", "--format", "fhir", bulk, "--threads", "many"])
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toContain("--threads must be auto or a whole number from 0 to 99")
    const omop = tryHcc(tempDataDir(), ["data", "import", "--format", "omop", bulk, "--threads", "2"])
    expect(omop.status).toBe(2)
    expect(omop.stderr).toContain("--threads is for --format fhir")
  })
})

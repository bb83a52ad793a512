/**
 * The import of the service's own CSV tables, streamed: a dataset many batches long imports in a
 * heap far smaller than its rows (the import once held every row and died at a million patients),
 * rows out of key order import the same dataset, and a repeated key is found wherever its twin is,
 * with its line, in bounded memory.
 */
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { datasetDigest } from "../support/datasets.ts"
import { dbEnv, hcc, ROOT, tryHcc, tempDataDir } from "../support/server.ts"

let csv: string
let digest: string
beforeAll(() => {
  const source = tempDataDir()
  hcc(source, ["data", "generate", "--patients", "4000", "--seed", "5"])
  csv = join(tempDataDir(), "csv")
  hcc(source, ["data", "export", csv])
  digest = datasetDigest(source)
}, 120_000)

/** A copy of the export with one table's data lines changed. */
const variant = (table: string, edit: (lines: Array<string>) => Array<string>) => {
  const folder = tempDataDir()
  for (const f of readdirSync(csv)) {
    const text = readFileSync(join(csv, f), "utf8")
    if (f !== `${table}.csv`) {
      writeFileSync(join(folder, f), text, { flag: "w" })
      continue
    }
    const [header, ...lines] = text.trimEnd().split("\n")
    writeFileSync(join(folder, f), [header!, ...edit(lines)].join("\n") + "\n")
  }
  return folder
}

describe("the CSV import, streamed", () => {
  it("imports a dataset of many batches in a 56 MB heap, the same dataset", () => {
    const dataDir = tempDataDir()
    const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), "data", "import", csv, "--json"], {
      cwd: ROOT,
      env: { ...dbEnv({ dataDir }), NODE_OPTIONS: "--max-old-space-size=56" },
      encoding: "utf8",
      timeout: 120_000
    })
    expect(r.status, r.stderr.slice(-2000)).toBe(0)
    const summary = JSON.parse(r.stdout) as { patients: number; rows: Record<string, number>; phases: Record<string, number> }
    expect(summary.patients).toBe(4000)
    expect(summary.rows.axis_scores).toBeGreaterThan(4 * 20_000)
    expect(Object.keys(summary.phases)).toEqual(["reading"])
    expect(datasetDigest(dataDir)).toBe(digest)
  }, 120_000)

  it("rows out of key order: the same dataset, no scratch file left", () => {
    const dataDir = tempDataDir()
    hcc(dataDir, ["data", "import", variant("axis_scores", (lines) => [...lines].reverse())])
    expect(datasetDigest(dataDir)).toBe(digest)
    expect(readdirSync(dataDir).filter((f) => f.startsWith("import-"))).toEqual([])
  }, 120_000)

  it.each([
    ["in key order, next to its twin", (lines: Array<string>) => [lines[0]!, lines[0]!, ...lines.slice(1)], 3],
    ["out of key order, far from its twin", (lines: Array<string>) => [...lines.slice(0, 50_000).reverse(), lines[10]!, ...lines.slice(50_000)], 50_002]
  ])("a repeated key %s: its line, nothing imported", (_, edit, line) => {
    const dataDir = tempDataDir()
    hcc(dataDir, ["data", "generate", "--patients", "50", "--seed", "1"])
    const before = datasetDigest(dataDir)
    const r = tryHcc(dataDir, ["data", "import", variant("axis_scores", edit)])
    expect(r.status).toBe(1)
    expect(r.stderr).toContain(`axis_scores.csv:${line}: patient_id, month: duplicate of an earlier row`)
    expect(datasetDigest(dataDir)).toBe(before)
    expect(readdirSync(dataDir).filter((f) => f.startsWith("import-"))).toEqual([])
  }, 120_000)
})

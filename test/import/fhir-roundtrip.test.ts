/**
 * Generated dataset → `hcc data export --format fhir` → `hcc data import --format fhir`: the same
 * dataset (every table but the import's own bookkeeping), so the README's sample calls give
 * identical answers from both.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, hcc, ROOT, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

/** The README's sample calls: every `-d '{…}'` body of its curl lines, with the path it is sent to. */
export const readmeCalls = (): ReadonlyArray<readonly [string, unknown]> => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const calls: Array<readonly [string, unknown]> = []
  const re = /curl -s localhost:8080(\/v1\/[a-z-]+)[^\n]*\\\n\s*-d '([^']+)'/g
  for (let m = re.exec(readme); m !== null; m = re.exec(readme)) calls.push([m[1]!, JSON.parse(m[2]!)])
  return calls
}

const csvExport = (dataDir: string) => {
  const out = join(tempDataDir(), "csv")
  hcc(dataDir, ["data", "export", out])
  return Object.fromEntries(readdirSync(out).map((f) => [f, readFileSync(join(out, f), "utf8")]))
}

let original: string
let imported: string
let bulk: string
let summary: Record<string, any>
let servers: ReadonlyArray<TestServer> = []

beforeAll(async () => {
  original = tempDataDir()
  hcc(original, ["data", "generate", "--patients", "8000", "--seed", "11"])
  bulk = join(tempDataDir(), "bulk")
  hcc(original, ["data", "export", "--format", "fhir", "--gzip", bulk])
  imported = tempDataDir()
  summary = JSON.parse(hcc(imported, ["data", "import", "--format", "fhir", bulk, "--json"]))
  servers = await Promise.all([original, imported].map((dataDir) => startServer({ dataDir })))
  await Promise.all(servers.map((s) => waitReady(s)))
}, 240_000)

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
})

describe("FHIR export → import", () => {
  it("writes Bulk Data files, one resource type each, gzip'd", () => {
    const files = readdirSync(bulk).filter((f) => f.endsWith(".ndjson.gz")).sort()
    expect(files).toEqual(["AdverseEvent", "CodeSystem", "Condition", "Encounter", "Medication", "MedicationRequest", "Observation", "Organization", "Patient", "Procedure"].map((t) => `${t}.ndjson.gz`))
    expect(summary.read.Patient).toBe(8000)
    expect(summary.as_of).toBe("2026-09-30")
    expect(summary.unmapped).toEqual([])
  })

  it("gives back the same tables (ids, codes, dates, scores, adherence, outcomes, surveillance)", () => {
    const a = csvExport(original)
    const b = csvExport(imported)
    for (const file of Object.keys(a)) {
      if (file === "dataset_info.csv" || file === "source_ids.csv") continue
      if (file === "device_studies.csv") {
        // Studies without an implant have no Procedure to come back with; every other comes back the same.
        const back = new Set(b[file]!.split("\n"))
        const used = new Set(b["device_implants.csv"]!.split("\n").slice(1).map((l) => l.split(",")[3]))
        for (const line of a[file]!.split("\n").slice(1)) if (used.has(line.split(",")[0])) expect(back.has(line), line).toBe(true)
        continue
      }
      expect(b[file], file).toBe(a[file])
    }
    expect(b["source_ids.csv"]).toContain("patients,1,Patient/1\n")
  })

  it("the README's sample calls give identical answers", async () => {
    const calls = readmeCalls()
    expect(calls.map(([path]) => path)).toEqual(["/v1/clinical", "/v1/population", "/v1/drug-outcomes", "/v1/risk-model", "/v1/one-health", "/v1/device-outcomes", "/v1/temporal"])
    let answered = 0
    for (const [path, body] of calls) {
      const [a, b] = await Promise.all(servers.map((s) => call(s, path, { body })))
      expect(b!.status, path).toBe(a!.status)
      const [ja, jb] = await Promise.all([a!.json(), b!.json()]) as [Record<string, unknown>, Record<string, unknown>]
      delete ja.request_id
      delete jb.request_id
      expect(jb, path).toEqual(ja)
      if (a!.status === 200) answered++
    }
    expect(answered).toBeGreaterThanOrEqual(6)
  })
})

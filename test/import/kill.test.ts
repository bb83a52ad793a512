/**
 * A kill -9 in the middle of an import, while it reads the files and while it writes the new
 * dataset: the previous dataset is intact, a restarted server serves it, and the next import
 * cleans up what the killed one left and succeeds.
 */
import { spawn } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { datasetDigest, generatedDataDir, generatedFhirExport, servedDataset } from "../support/datasets.ts"
import { dbEnv, hcc, ROOT } from "../support/server.ts"

let bulk: string
/** A small export for the import after the kill: any import removes what a killed one left. */
let small: string
beforeAll(() => {
  bulk = generatedFhirExport(6000, 31)
  small = generatedFhirExport(300, 5)
}, 120_000)

/** Starts an import and kills it (SIGKILL) once its progress line for `phase` reaches `percent`. */
const killImportAt = (dataDir: string, phase: string, percent: number) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "src/cli.ts"), "data", "import", "--format", "fhir", bulk], { cwd: ROOT, env: dbEnv({ dataDir }), stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      err += d
      const m = [...err.matchAll(new RegExp(`importing FHIR: ${phase} (\\d+)%`, "g"))].map((x) => Number(x[1]))
      if (m.some((p) => p >= percent) && child.exitCode === null) child.kill("SIGKILL")
    })
    child.on("exit", (code, signal) => (signal === "SIGKILL" ? resolve() : reject(new Error(`the import ended (${String(code)}) before it was killed:\n${err}`))))
  })

describe("kill -9 during an import", () => {
  it.each([["while it reads the files", "reading", 30], ["while it writes the new dataset", "writing", 90]])("%s: nothing partial, the previous dataset served after restart", async (_, phase, percent) => {
    const dataDir = generatedDataDir(300, 2)
    const before = datasetDigest(dataDir)
    await killImportAt(dataDir, phase, percent)
    expect(datasetDigest(dataDir)).toBe(before)
    expect(await servedDataset(dataDir)).toMatchObject({ patients: 300, source: "synthetic" })
    // The next import removes what the killed one left and succeeds.
    expect(JSON.parse(hcc(dataDir, ["data", "import", "--format", "fhir", small, "--json"])).rows.patients).toBe(300)
    expect(readdirSync(dataDir).filter((f) => f.includes("staging")), readdirSync(dataDir).join(" ")).toEqual([])
  }, 240_000)
})

/**
 * Ctrl-C (SIGINT) and SIGTERM stop an import in each of its phases, sent as soon as the phase's
 * first progress line appears: the command exits 130 or 143 saying it stopped, the dataset in use
 * is the one before (a server started on the folder serves it), and no scratch file is left.
 */
import { spawn } from "node:child_process"
import { appendFileSync, cpSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { omopFromExport } from "../fixtures/omop/fromDataset.ts"
import { datasetDigest, generatedDataDir, servedDataset } from "../support/datasets.ts"
import { dbEnv, hcc, ROOT, tempDataDir } from "../support/server.ts"

let csv: string
let fhir: string
let omop: string
let omopLongVocabulary: string
let dataDir: string
let before: string

beforeAll(() => {
  const source = tempDataDir()
  hcc(source, ["data", "generate", "--patients", "2000", "--seed", "31"])
  csv = join(tempDataDir(), "csv")
  hcc(source, ["data", "export", csv])
  fhir = join(tempDataDir(), "fhir")
  hcc(source, ["data", "export", "--format", "fhir", fhir])
  omop = omopFromExport(csv, join(tempDataDir(), "omop"))
  // For the vocabulary phase, the same folder with a vocabulary of the size of a few Athena
  // vocabularies, none of it used by the clinical tables, so that phase lasts long enough to be
  // stopped in (the other phases' cases do without: it only lengthens the phase before theirs).
  omopLongVocabulary = join(tempDataDir(), "omop-long-vocabulary")
  cpSync(omop, omopLongVocabulary, { recursive: true })
  const concepts: Array<string> = []
  const relationships: Array<string> = []
  for (let id = 1_000_000; id < 1_300_000; id++) {
    concepts.push(`${id}\tUnused concept ${id}\tCondition\tSNOMED\tClinical Finding\tS\t${id}\t19700101\t20991231\t`)
    relationships.push(`${id}\t${id + 1}\tSubsumes\t19700101\t20991231\t`)
  }
  appendFileSync(join(omopLongVocabulary, "concept.tsv"), concepts.join("\n") + "\n")
  appendFileSync(join(omopLongVocabulary, "concept_relationship.tsv"), "concept_id_1\tconcept_id_2\trelationship_id\tvalid_start_date\tvalid_end_date\tinvalid_reason\n" + relationships.join("\n") + "\n")
  dataDir = generatedDataDir(300, 2)
  before = datasetDigest(dataDir)
}, 240_000)

/** Runs an import and sends `signal` when its progress line for `phase` first appears; the exit code, stderr and the phase lines seen. */
const stopImportAt = (format: string, source: string, phase: string, signal: NodeJS.Signals) =>
  new Promise<{ readonly code: number | null; readonly stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "src/cli.ts"), "data", "import", "--format", format, source], { cwd: ROOT, env: dbEnv({ dataDir }), stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    let sent = false
    child.stderr!.setEncoding("utf8").on("data", (d: string) => {
      err += d
      if (!sent && new RegExp(`^importing ${format.toUpperCase()}: ${phase} `, "m").test(err)) {
        sent = true
        child.kill(signal)
      }
    })
    child.on("exit", (code) => (sent ? resolve({ code, stderr: err }) : reject(new Error(`the import ended (${String(code)}) before its ${phase} phase:\n${err}`))))
  })

const CASES = [
  ["omop", "vocabulary"],
  ["omop", "reading"],
  ["omop", "staging"],
  ["omop", "writing"],
  ["fhir", "reading"],
  ["fhir", "staging"],
  ["fhir", "writing"],
  ["csv", "reading"]
] as const

describe("stopping an import", () => {
  it.each(CASES.flatMap(([format, phase]) => (["SIGINT", "SIGTERM"] as const).map((signal) => [format, phase, signal] as const)))(
    "%s, %s phase, %s: exits non-zero, nothing written, no scratch left",
    async (format, phase, signal) => {
      const source = format === "omop" ? (phase === "vocabulary" ? omopLongVocabulary : omop) : format === "fhir" ? fhir : csv
      const { code, stderr } = await stopImportAt(format, source, phase, signal)
      expect(code, stderr).toBe(signal === "SIGINT" ? 130 : 143)
      expect(stderr).toContain(`hcc: stopped by ${signal} before it finished: nothing was written`)
      expect(readdirSync(dataDir).filter((f) => f.startsWith("import-"))).toEqual([])
      expect(datasetDigest(dataDir)).toBe(before)
    },
    120_000
  )

  it("a signal once the new dataset is in place (its summary printed) no longer stops the import: exit 0, the new dataset", async () => {
    const target = generatedDataDir(300, 2)
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, "src/cli.ts"), "data", "import", csv, "--json"], { cwd: ROOT, env: dbEnv({ dataDir: target }), stdio: ["ignore", "pipe", "ignore"] })
      child.stdout!.once("data", () => child.kill("SIGINT"))
      child.on("exit", resolve)
    })
    expect(code).toBe(0)
    expect(datasetDigest(target)).not.toBe(before)
    expect(readdirSync(target).filter((f) => f.startsWith("import-"))).toEqual([])
  }, 120_000)

  it("the dataset before is still served, and the next import succeeds", async () => {
    expect(await servedDataset(dataDir)).toMatchObject({ patients: 300, source: "synthetic" })
    const summary = JSON.parse(hcc(dataDir, ["data", "import", "--format", "omop", omop, "--json"])) as { rows: { patients: number }; phases: Record<string, number> }
    expect(summary.rows.patients).toBe(2000)
    expect(Object.keys(summary.phases)).toEqual(["vocabulary", "reading", "staging", "writing"])
  }, 240_000)
})

/**
 * Instrument values as sources write them: a number sent as text (FHIR `valueString` "12", as some
 * EHR flowsheets export questionnaire totals) is that number; a comparator ("<5") makes it no
 * exact value, left out and counted.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

let t: Record<string, Table>
let summary: Record<string, any>

const phq9 = (id: string, patient: string, date: string, value: object) =>
  JSON.stringify({ resourceType: "Observation", id, status: "final", code: { coding: [{ system: "http://loinc.org", code: "44261-6" }] }, subject: { reference: `Patient/${patient}` }, effectiveDateTime: date, ...value })

beforeAll(() => {
  const bulk = join(tempDataDir(), "bulk")
  mkdirSync(bulk, { recursive: true })
  writeFileSync(join(bulk, "Patient.ndjson"), ["p1", "p2", "p3"].map((id) => JSON.stringify({ resourceType: "Patient", id, gender: "female", birthDate: "1970" })).join("\n") + "\n")
  writeFileSync(join(bulk, "Observation.ndjson"), [
    phq9("o1", "p1", "2024-03-05", { valueString: "12" }),
    phq9("o2", "p2", "2024-03-05", { valueQuantity: { value: 12 } }),
    phq9("o3", "p3", "2024-03-05", { valueString: "<5" })
  ].join("\n") + "\n")
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-03-31", "--json"]))
  t = tablesOf(dir)
})

describe("instrument values written as text", () => {
  it("a number as text scores as the number; a comparator is no exact value, counted", () => {
    const er = Object.fromEntries(t.axis_scores!.map((r) => [r.patient_id, r.er]))
    expect(er["1"]).toBe("5.6")
    expect(er["1"]).toBe(er["2"])
    expect(er["3"]).toBeUndefined()
    expect(summary.left_out["phq9: no value: left out"]).toBe(1)
  })
})

/**
 * What a FHIR Condition's category says it is (R4 Condition.category; US Core): a problem-list item
 * or an encounter diagnosis is a diagnosis; a health concern (a worry of the patient or a carer,
 * US Core's health-concern) or a social determinant of health (US Core's sdoh) alone is not — left
 * out and counted; a Condition without a category counts as recorded.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const HL7 = "http://terminology.hl7.org/CodeSystem/condition-category"
const US_CORE = "http://hl7.org/fhir/us/core/CodeSystem/condition-category"
const US_CORE_SDOH = "http://hl7.org/fhir/us/core/CodeSystem/us-core-category"

/** Patient, category codings, condition: each patient has one Condition of type 2 diabetes. */
const CASES: ReadonlyArray<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
  ["problem-list", [[HL7, "problem-list-item"]]],
  ["encounter", [[HL7, "encounter-diagnosis"]]],
  ["none", []],
  ["concern", [[US_CORE, "health-concern"]]],
  ["sdoh", [[US_CORE_SDOH, "sdoh"]]],
  ["both", [[US_CORE, "health-concern"], [HL7, "problem-list-item"]]]
]

describe("FHIR Condition.category", () => {
  it("a diagnosis by its category counts; a health concern or a social determinant alone is left out, counted", () => {
    const bulk = join(tempDataDir(), "bulk")
    mkdirSync(bulk, { recursive: true })
    writeFileSync(join(bulk, "Patient.ndjson"), CASES.map(([id]) => JSON.stringify({ resourceType: "Patient", id, gender: "female", birthDate: "1970-01-01" })).join("\n") + "\n")
    writeFileSync(join(bulk, "Condition.ndjson"), CASES.map(([id, categories]) => JSON.stringify({
      resourceType: "Condition",
      id: `c-${id}`,
      ...(categories.length === 0 ? {} : { category: categories.map(([system, code]) => ({ coding: [{ system, code }] })) }),
      code: { coding: [{ system: "http://snomed.info/sct", code: "44054006", display: "Diabetes mellitus type 2 (disorder)" }] },
      subject: { reference: `Patient/${id}` },
      onsetDateTime: "2023-05-01"
    })).join("\n") + "\n")
    const data = tempDataDir()
    const summary = JSON.parse(hcc(data, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-12-31", "--json"])) as Record<string, any>
    const t = tablesOf(data)
    const idOf = new Map(t["source_ids"]!.filter((r) => r["table_name"] === "patients").map((r) => [r["id"], r["source_id"]]))
    expect(t["patient_conditions"]!.map((r) => idOf.get(r["patient_id"]!)).sort()).toEqual(["Patient/both", "Patient/encounter", "Patient/none", "Patient/problem-list"])
    expect(summary.left_out["Condition of category health-concern or sdoh only (a concern or a social determinant, not a diagnosis): left out"]).toBe(2)
  })
})

/**
 * Claims as CARIN Blue Button publishes them (FHIR R4 ExplanationOfBenefit, C4BB 2.0): a pharmacy
 * claim's item is a fill with its days supply (evidence of adherence), an institutional claim a
 * stay or visit by its subtype and revenue codes, a professional claim a visit by its place of
 * service; their diagnoses are conditions. Cancelled claims and other claim types are left out,
 * counted.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const ndjson = (rows: ReadonlyArray<object>) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n"
const C4BB = "http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBSupportingInfoType"
const claimType = (code: string) => ({ coding: [{ system: "http://terminology.hl7.org/CodeSystem/claim-type", code }] })
const metformin = { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "6809", display: "metformin" }] }
const fill = (id: string, day: string, days: number, status = "active") => ({
  resourceType: "ExplanationOfBenefit", id, status, type: claimType("pharmacy"), use: "claim", patient: { reference: "Patient/p1" },
  billablePeriod: { start: day, end: day }, outcome: "complete",
  supportingInfo: [
    { sequence: 1, category: { coding: [{ system: C4BB, code: "dayssupply" }] }, valueQuantity: { value: days, unit: "d" } },
    { sequence: 2, category: { coding: [{ system: C4BB, code: "refillnum" }] }, valueQuantity: { value: 0 } }
  ],
  item: [{ sequence: 1, servicedDate: day, productOrService: metformin, informationSequence: [1, 2] }]
})
const icd10 = (code: string) => ({ coding: [{ system: "http://hl7.org/fhir/sid/icd-10-cm", code }] })

describe("FHIR ExplanationOfBenefit (CARIN Blue Button)", () => {
  let t: Record<string, Table>
  let summary: Record<string, any>
  beforeAll(() => {
    const bulk = join(tempDataDir(), "bulk")
    mkdirSync(bulk, { recursive: true })
    writeFileSync(join(bulk, "Patient.ndjson"), ndjson([{ resourceType: "Patient", id: "p1", birthDate: "1955-02-01", gender: "female" }]))
    writeFileSync(join(bulk, "ExplanationOfBenefit.ndjson"), ndjson([
      fill("rx1", "2024-01-01", 30), fill("rx2", "2024-02-05", 30), fill("rx3", "2024-03-20", 30), fill("rx4", "2024-04-10", 90, "cancelled"),
      {
        resourceType: "ExplanationOfBenefit", id: "ip1", status: "active", type: claimType("institutional"), subType: { coding: [{ code: "inpatient" }] },
        use: "claim", patient: { reference: "Patient/p1" }, billablePeriod: { start: "2024-05-01", end: "2024-05-06" }, outcome: "complete",
        supportingInfo: [{ sequence: 1, category: { coding: [{ system: C4BB, code: "admissionperiod" }] }, timingPeriod: { start: "2024-05-02", end: "2024-05-06" } }],
        diagnosis: [{ sequence: 1, diagnosisCodeableConcept: icd10("E11.9") }],
        item: [{ sequence: 1, revenue: { coding: [{ code: "0120" }] }, productOrService: { coding: [{ code: "99223" }] } }]
      },
      {
        resourceType: "ExplanationOfBenefit", id: "op1", status: "active", type: claimType("institutional"), subType: { coding: [{ code: "outpatient" }] },
        use: "claim", patient: { reference: "Patient/p1" }, billablePeriod: { start: "2024-06-10", end: "2024-06-10" }, outcome: "complete",
        diagnosis: [{ sequence: 1, diagnosisCodeableConcept: icd10("I10") }],
        item: [{ sequence: 1, revenue: { coding: [{ code: "0450" }] }, productOrService: { coding: [{ code: "99284" }] } }]
      },
      {
        resourceType: "ExplanationOfBenefit", id: "pr1", status: "active", type: claimType("professional"), use: "claim", patient: { reference: "Patient/p1" },
        billablePeriod: { start: "2024-07-15", end: "2024-07-15" }, outcome: "complete",
        item: [{ sequence: 1, servicedDate: "2024-07-15", locationCodeableConcept: { coding: [{ code: "11" }] }, productOrService: { coding: [{ code: "99213" }] } }]
      },
      { resourceType: "ExplanationOfBenefit", id: "or1", status: "active", type: claimType("oral"), use: "claim", patient: { reference: "Patient/p1" }, billablePeriod: { start: "2024-08-01" }, outcome: "complete" }
    ]))
    const dir = tempDataDir()
    summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-12-31", "--json"]))
    t = tablesOf(dir)
  })
  it("pharmacy claims are fills: one era while refills come within 30 days, adherence their PDC; a cancelled claim is left out", () => {
    // Fills cover 2024-01-01..01-30, 02-05..03-05, 03-20..04-18: an era of 109 days with 90 covered.
    expect(t.drug_exposures!.map((d) => [d.drug, d.start_date, d.end_date, d.adherence])).toEqual([["metformin", "2024-01-01", "2024-04-18", String(Math.round((90 / 109) * 1e4) / 1e4)]])
    expect(t.source_ids!.find((s) => s.table_name === "drug_exposures")!.source_id).toBe("ExplanationOfBenefit/rx1 ExplanationOfBenefit/rx2 ExplanationOfBenefit/rx3")
    expect(summary.left_out["ExplanationOfBenefit with status cancelled: left out"]).toBe(1)
  })
  it("institutional claims are stays (the admission period) and visits, an emergency room revenue code an emergency; professional claims visits by place of service", () => {
    expect(t.encounters!.map((e) => [e.kind, e.start_date, e.end_date])).toEqual([
      ["inpatient", "2024-05-02", "2024-05-06"],
      ["emergency", "2024-06-10", "2024-06-10"],
      ["outpatient", "2024-07-15", "2024-07-15"]
    ])
    expect(summary.left_out["ExplanationOfBenefit of type oral: left out"]).toBe(1)
  })
  it("their diagnoses are conditions", () => {
    expect(t.patient_conditions!.map((c) => c.condition).sort()).toEqual(["hypertension", "type_2_diabetes"])
  })
})

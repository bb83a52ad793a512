/**
 * A MedicationRequest's course as the CQL Cumulative Medication Duration library reads an order
 * (medicationRequestPeriod, CMD 6.0.000): the days supplied (expectedSupplyDuration, else quantity ÷
 * dose per day) times one plus the refills, else the dosage bounds' end; the prescription's
 * validity end is never the course's. A 30-day supply with two refills filled three times on time
 * is a 90-day course taken throughout (adherence 1), not a year-long one taken a quarter of it.
 */
import type * as fhir4 from "fhir/r4.js"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { medicationRequestPeriod } from "../../src/formats/fhir/medicationPeriod.ts"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const order = (fields: Partial<fhir4.MedicationRequest>): fhir4.MedicationRequest =>
  ({ resourceType: "MedicationRequest", status: "active", intent: "order", subject: { reference: "Patient/p1" }, ...fields }) as fhir4.MedicationRequest
const dosage = (frequency: number, period: number, periodUnit: fhir4.TimingRepeat["periodUnit"], dose: number): fhir4.Dosage =>
  ({ timing: { repeat: { frequency, period, periodUnit } }, doseAndRate: [{ doseQuantity: { value: dose } }] })

describe("medicationRequestPeriod", () => {
  it("days supplied × (1 + refills); the validity period's end is not the course's", () => {
    const p = medicationRequestPeriod(order({
      authoredOn: "2024-01-10",
      dispenseRequest: { validityPeriod: { start: "2024-01-10", end: "2025-01-10" }, expectedSupplyDuration: { value: 30, code: "d" }, numberOfRepeatsAllowed: 2 }
    }))
    expect(p).toEqual({ start: { value: "2024-01-10", path: "MedicationRequest.authoredOn" }, days: 90 })
  })

  it("without a supply duration, quantity ÷ (dose × doses a day), the timing converted to a day", () => {
    expect(medicationRequestPeriod(order({ authoredOn: "2024-01-10", dosageInstruction: [dosage(2, 1, "d", 1)], dispenseRequest: { quantity: { value: 60 }, numberOfRepeatsAllowed: 1 } })).days).toBe(60)
    expect(medicationRequestPeriod(order({ authoredOn: "2024-01-10", dosageInstruction: [dosage(1, 1, "wk", 1)], dispenseRequest: { quantity: { value: 4 } } })).days).toBe(28)
    expect(medicationRequestPeriod(order({ authoredOn: "2024-01-10", dosageInstruction: [dosage(1, 8, "h", 2)], dispenseRequest: { quantity: { value: 60 } } })).days).toBe(10)
    // A fraction of a day is truncated, as CQL's date arithmetic does.
    expect(medicationRequestPeriod(order({ authoredOn: "2024-01-10", dosageInstruction: [dosage(2, 1, "d", 1)], dispenseRequest: { quantity: { value: 45 } } })).days).toBe(22)
    // Several dosages (split or tapering doses): no single dose, so no quantity rule.
    expect(medicationRequestPeriod(order({ authoredOn: "2024-01-10", dosageInstruction: [dosage(1, 1, "d", 1), dosage(1, 1, "d", 2)], dispenseRequest: { quantity: { value: 30 } } })).days).toBeUndefined()
  })

  it("the supply before the dosage bounds' end; the bounds' end when there is no supply; else nothing", () => {
    const bounded = (dispenseRequest?: fhir4.MedicationRequestDispenseRequest) =>
      medicationRequestPeriod(order({ authoredOn: "2024-01-01", dosageInstruction: [{ timing: { repeat: { boundsPeriod: { start: "2024-01-05", end: "2024-12-31" } } } }], ...(dispenseRequest === undefined ? {} : { dispenseRequest }) }))
    expect(bounded({ expectedSupplyDuration: { value: 10, unit: "days" } })).toEqual({ start: { value: "2024-01-05", path: "MedicationRequest.dosageInstruction.timing.repeat.boundsPeriod.start" }, days: 10 })
    expect(bounded()).toEqual({ start: { value: "2024-01-05", path: "MedicationRequest.dosageInstruction.timing.repeat.boundsPeriod.start" }, boundsEnd: "2024-12-31" })
    expect(medicationRequestPeriod(order({ dispenseRequest: { validityPeriod: { start: "2024-02-01", end: "2025-02-01" } } }))).toEqual({ start: { value: "2024-02-01", path: "MedicationRequest.dispenseRequest.validityPeriod.start" } })
  })
})

describe("a 30-day supply with two refills, filled three times", () => {
  it("is a 90-day course with adherence 1", () => {
    const bulk = join(tempDataDir(), "bulk")
    mkdirSync(bulk, { recursive: true })
    const metformin = { coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: "6809", display: "metformin" }] }
    writeFileSync(join(bulk, "Patient.ndjson"), JSON.stringify({ resourceType: "Patient", id: "p1", gender: "female", birthDate: "1960-01-01" }) + "\n")
    writeFileSync(join(bulk, "MedicationRequest.ndjson"), JSON.stringify(order({
      id: "mr1",
      medicationCodeableConcept: metformin,
      authoredOn: "2024-01-01",
      dispenseRequest: { validityPeriod: { start: "2024-01-01", end: "2025-01-01" }, expectedSupplyDuration: { value: 30, code: "d" }, numberOfRepeatsAllowed: 2 }
    })) + "\n")
    writeFileSync(join(bulk, "MedicationDispense.ndjson"), ["2024-01-01", "2024-01-31", "2024-03-01"].map((day, i) => JSON.stringify({
      resourceType: "MedicationDispense", id: `md${i}`, status: "completed", subject: { reference: "Patient/p1" }, medicationCodeableConcept: metformin, whenHandedOver: day, daysSupply: { value: 30, code: "d" }
    })).join("\n") + "\n")
    const data = tempDataDir()
    hcc(data, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-12-31", "--json"])
    expect(tablesOf(data)["drug_exposures"]!.map((d) => [d["drug"], d["start_date"], d["end_date"], d["adherence"]])).toEqual([["metformin", "2024-01-01", "2024-03-30", "1"]])
  })
})

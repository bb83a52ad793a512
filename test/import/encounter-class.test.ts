/**
 * Encounter.class as EHRs send it (R4's binding is extensible): HL7 v3 ActCode under its R4 and
 * earlier URIs, HL7 v2 table 0004 patient classes (v2-based exports, Oracle Health), and a vendor's
 * own class system (Epic's `urn:oid:1.2.840.114350…`) read by its display. A class that names no
 * visit is left out and counted under its code, display and system, never dropped silently. A stay
 * still going on (in progress, no end) lasts to as_of; a finished visit without an end, a day.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { kindOfDisplay } from "../../src/formats/fhir/encounterClass.ts"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const EPIC = "urn:oid:1.2.840.114350.1.72.1.7.7.10.696784.13260"
const classes: ReadonlyArray<readonly [string, { system?: string; code: string; display?: string }]> = [
  ["e1", { system: "http://hl7.org/fhir/v3/ActCode", code: "IMP" }],
  ["e2", { system: "http://terminology.hl7.org/CodeSystem/v2-0004", code: "E", display: "Emergency" }],
  ["e3", { system: "http://terminology.hl7.org/CodeSystem/v2-0004", code: "O" }],
  ["e4", { system: EPIC, code: "5", display: "Inpatient" }],
  ["e5", { system: EPIC, code: "3", display: "Hospital Outpatient Visit" }],
  ["e6", { system: EPIC, code: "4", display: "Emergency" }],
  ["e7", { system: EPIC, code: "13", display: "Support OP Encounter" }],
  ["e8", { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "HH" }]
]

let t: Record<string, Table>
let summary: Record<string, any>

beforeAll(() => {
  const bulk = join(tempDataDir(), "bulk")
  mkdirSync(bulk, { recursive: true })
  writeFileSync(join(bulk, "Patient.ndjson"), JSON.stringify({ resourceType: "Patient", id: "p1", gender: "female", birthDate: "1960-04-02" }) + "\n")
  writeFileSync(join(bulk, "Encounter.ndjson"), classes.map(([id, cls], i) =>
    JSON.stringify({ resourceType: "Encounter", id, status: "finished", class: cls, subject: { reference: "Patient/p1" }, period: { start: `2024-0${i + 1}-10`, end: `2024-0${i + 1}-10` } })).concat(
      JSON.stringify({ resourceType: "Encounter", id: "stay", status: "in-progress", class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "IMP" }, subject: { reference: "Patient/p1" }, period: { start: "2024-12-20" } }),
      JSON.stringify({ resourceType: "Encounter", id: "visit", status: "finished", class: { system: "http://terminology.hl7.org/CodeSystem/v3-ActCode", code: "AMB" }, subject: { reference: "Patient/p1" }, period: { start: "2024-11-05" } })
    ).join("\n") + "\n")
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-12-31", "--json"]))
  t = tablesOf(dir)
})

describe("Encounter.class from each source", () => {
  it("v3 ActCode under the earlier URI, v2 table 0004, and Epic's own classes by their display", () => {
    const kindOf = new Map(t.source_ids!.filter((r) => r.table_name === "encounters").map((r) => [r.source_id, t.encounters!.find((e) => e.id === r.id)!.kind]))
    expect(Object.fromEntries(kindOf)).toEqual({
      "Encounter/e1": "inpatient",
      "Encounter/e2": "emergency",
      "Encounter/e3": "outpatient",
      "Encounter/e4": "inpatient",
      "Encounter/e5": "outpatient",
      "Encounter/e6": "emergency",
      "Encounter/stay": "inpatient",
      "Encounter/visit": "outpatient"
    })
  })

  it("a stay in progress without an end lasts to as_of; a finished visit without one, its day", () => {
    const of = (src: string) => t.encounters!.find((e) => e.id === t.source_ids!.find((r) => r.table_name === "encounters" && r.source_id === src)!.id)!
    expect([of("Encounter/stay").start_date, of("Encounter/stay").end_date]).toEqual(["2024-12-20", "2024-12-31"])
    expect([of("Encounter/visit").start_date, of("Encounter/visit").end_date]).toEqual(["2024-11-05", "2024-11-05"])
  })

  it("a class that names no visit is counted under its code, display and system; a known system's under its code", () => {
    expect(summary.left_out[`Encounter of class 13 'Support OP Encounter' of ${EPIC}: not a visit the analytics count, left out`]).toBe(1)
    expect(summary.left_out["Encounter of class HH: not a visit the analytics count, left out"]).toBe(1)
  })

  it("displays: an admission from the emergency department is inpatient; words that name no visit give none", () => {
    expect(kindOfDisplay("ED to Hosp-Admission")).toBe("inpatient")
    expect(kindOfDisplay("Telemedicine")).toBe("outpatient")
    expect(kindOfDisplay("Orders Only")).toBe(null)
    expect(kindOfDisplay(undefined)).toBe(null)
  })
})

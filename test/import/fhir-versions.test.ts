/**
 * A resource read more than once — an incremental export (`_since`) imported beside the export it
 * updates — counts once, in its latest version by `meta.lastUpdated` (FHIR R4: it changes whenever
 * the resource does), whichever file is read first; the same version read twice is kept once; two
 * versions without `meta.lastUpdated` cannot be told apart, and the import names both places.
 */
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ehrFiles, writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tryHcc, tempDataDir } from "../support/server.ts"

const BASE = "2024-06-01T08:00:00Z"
const LATER = "2024-09-15T14:30:00.250+02:00"
const EARLIER = "2024-01-05T00:00:00Z"

type Resource = Record<string, any>

/** The EHR export with every resource at one version. */
const versioned = (updated: string | undefined): Record<string, ReadonlyArray<Resource>> =>
  Object.fromEntries(Object.entries(ehrFiles()).map(([file, lines]) => [file, (lines as ReadonlyArray<Resource>).map((r) => (updated === undefined ? r : { ...r, meta: { lastUpdated: updated } }))]))

const find = (files: Record<string, ReadonlyArray<Resource>>, file: string, id: string): Resource => structuredClone(files[file]!.find((r) => r.id === id)!)

const importing = (folders: ReadonlyArray<string>) => {
  const dir = tempDataDir()
  const summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", ...folders, "--as-of", "2024-12-31", "--json"]))
  return { summary, t: tablesOf(dir) }
}

const patientOf = (t: Record<string, Table>, src: string) => t.source_ids!.find((r) => r.table_name === "patients" && r.source_id === `Patient/${src}`)!.id

let base: ReturnType<typeof importing>
let updated: ReturnType<typeof importing>
let twice: ReturnType<typeof importing>

beforeAll(() => {
  const files = versioned(BASE)
  base = importing([writeEhrExport(join(tempDataDir(), "base"), files)])
  // The incremental export: later versions of four resources, and an older version of one (read first: its folder comes first).
  const since: Record<string, Array<Resource>> = { "Patient.ndjson": [], "Condition.ndjson": [], "Encounter.ndjson": [] }
  since["Patient.ndjson"]!.push({ ...find(files, "Patient.ndjson", "p3"), birthDate: "1991-02", meta: { lastUpdated: LATER } })
  since["Patient.ndjson"]!.push({ ...find(files, "Patient.ndjson", "p5"), gender: "female", meta: { lastUpdated: LATER } })
  since["Condition.ndjson"]!.push({ ...find(files, "Condition.ndjson", "c1"), verificationStatus: { coding: [{ code: "entered-in-error" }] }, meta: { lastUpdated: LATER } })
  since["Condition.ndjson"]!.push({ ...find(files, "Condition.ndjson", "c5"), code: { coding: [{ system: "http://hl7.org/fhir/sid/icd-10-cm", code: "I10" }] }, meta: { lastUpdated: EARLIER } })
  since["Encounter.ndjson"]!.push({ ...find(files, "Encounter.ndjson", "e3"), period: { start: "2024-05-01", end: "2024-05-09" }, meta: { lastUpdated: LATER } })
  updated = importing([writeEhrExport(join(tempDataDir(), "since"), since), writeEhrExport(join(tempDataDir(), "base"), files)])
  // The whole export read twice (one version of everything): the dataset of reading it once.
  twice = importing([writeEhrExport(join(tempDataDir(), "one"), files), writeEhrExport(join(tempDataDir(), "two"), files)])
})

describe("FHIR: a resource read in several versions", () => {
  it("keeps the latest version of a patient, whichever file comes first", () => {
    const p3 = base.t.patients!.find((p) => p.id === patientOf(base.t, "p3"))!
    expect(p3.birth_year).toBe("1990")
    expect(updated.t.patients!.find((p) => p.id === patientOf(updated.t, "p3"))!.birth_year).toBe("1991")
    expect(updated.t.patients!.find((p) => p.id === patientOf(updated.t, "p5"))!.sex).toBe("female")
    expect(updated.t.patients).toHaveLength(base.t.patients!.length)
  })

  it("a condition entered in error in its later version is no diagnosis; an older version never replaces a newer", () => {
    const conditionsOf = (r: typeof base, src: string) => r.t.patient_conditions!.filter((c) => c.patient_id === patientOf(r.t, src)).map((c) => c.condition).sort()
    expect(conditionsOf(base, "p1")).toContain("type_2_diabetes")
    expect(conditionsOf(updated, "p1")).not.toContain("type_2_diabetes")
    expect(conditionsOf(updated, "p2")).toEqual(conditionsOf(base, "p2"))
    expect(conditionsOf(updated, "p2")).not.toContain("hypertension")
    expect(updated.summary.left_out["Condition in an older version than another read (an earlier meta.lastUpdated): the older left out"]).toBe(2)
    expect(updated.summary.left_out["Patient in an older version than another read (an earlier meta.lastUpdated): the older left out"]).toBe(2)
  })

  it("an encounter updated later counts once, with its later end", () => {
    const stays = (r: typeof base) => r.t.encounters!.filter((e) => e.patient_id === patientOf(r.t, "p2") && e.kind === "inpatient").map((e) => [e.start_date, e.end_date])
    expect(stays(base)).toEqual([["2024-05-01", "2024-05-06"]])
    expect(stays(updated)).toEqual([["2024-05-01", "2024-05-09"]])
    expect(updated.t.encounters).toHaveLength(base.t.encounters!.length)
  })

  it("the same version read twice is kept once: the dataset of reading it once", () => {
    for (const table of ["patients", "patient_conditions", "encounters", "drug_exposures", "adverse_events", "axis_scores", "device_implants"]) {
      expect(twice.t[table], table).toEqual(base.t[table])
    }
    expect(twice.summary.left_out["Observation read twice in one version (the same meta.lastUpdated): kept once"]).toBeGreaterThan(0)
    expect(twice.summary.rows).toEqual(base.summary.rows)
  })

  it("two versions without meta.lastUpdated: the import fails naming both places", () => {
    const files = versioned(undefined)
    const copy = { "Condition.ndjson": [find(files, "Condition.ndjson", "c2")] }
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "base"), files), writeEhrExport(join(tempDataDir(), "again"), copy)])
    expect(r.status).not.toBe(0)
    expect(r.stderr).toMatch(/again\/Condition\.ndjson:1: Condition\.id: 'c2' is also the id of the Condition at .*base\/Condition\.ndjson:2; without meta\.lastUpdated on each version/)
  })
})

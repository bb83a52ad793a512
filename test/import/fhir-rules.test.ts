/**
 * Every FHIR mapping rule of docs/data.md on a small EHR-style export (test/fixtures/fhir/ehr.ts),
 * checked in the tables the import writes; and every kind of bad input, which imports nothing.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ehrFiles, writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { datasetDigest, type Table, tablesOf } from "../support/datasets.ts"
import { hcc, ROOT, tryHcc, tempDataDir } from "../support/server.ts"

let t: Record<string, Table>
let summary: Record<string, any>
const patient = (source: string) => t.source_ids!.find((r) => r.table_name === "patients" && r.source_id === `Patient/${source}`)!.id
const rowsOf = (table: string, source: string) => t[table]!.filter((r) => r.patient_id === patient(source))

beforeAll(() => {
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk")), "--as-of", "2024-12-31", "--json"]))
  t = tablesOf(dir)
})

describe("FHIR import: patients", () => {
  it("keeps each patient's FHIR id beside the integer id given in the export's order", () => {
    expect(t.patients!.map((p) => p.id)).toEqual(["1", "2", "3", "4", "5"])
    expect(["p1", "p2", "p3", "p4", "p5"].map(patient)).toEqual(["1", "2", "3", "4", "5"])
  })
  it("sex from gender, other and unknown kept, a missing gender unknown", () => {
    expect(t.patients!.map((p) => p.sex)).toEqual(["female", "male", "other", "unknown", "unknown"])
    expect(summary.left_out["Patient without gender: sex unknown"]).toBe(1)
  })
  it("birth year from a full or partial birthDate; death from deceasedDateTime (the date as written)", () => {
    expect(t.patients!.map((p) => p.birth_year)).toEqual(["1960", "1955", "1990", "1948", "2001"])
    expect(t.patients!.map((p) => p.death_date)).toEqual(["", "", "", "2025-06-01", ""])
  })
  it("region from the current home address: US state (code or name) → Census region, country (code, alpha-3 or name) → UN sub-region, none → unknown_region", () => {
    expect(t.patients!.map((p) => p.region)).toEqual(["northeast_us", "western_europe", "unknown_region", "east_asia", "south_us"])
    expect(t.vocabulary!.find((v) => v.kind === "region" && v.code === "northeast_us")!.label).toMatch(/Northeast/)
  })
})

describe("FHIR import: conditions", () => {
  it("SNOMED CT and ICD-10-CM (a category covers its subcodes) map to the service's conditions; a conditional reference finds its patient by identifier", () => {
    expect(rowsOf("patient_conditions", "p1").map((r) => r.condition)).toEqual(["acute_bronchitis", "hypertension", "type_2_diabetes"])
    expect(rowsOf("patient_conditions", "p2").map((r) => r.condition)).toContain("type_2_diabetes")
    expect(rowsOf("patient_conditions", "p2").map((r) => r.condition)).toContain("heart_failure")
  })
  it("an unmapped code is imported under its display (semantic tag dropped), its standard code kept and counted", () => {
    const entry = t.vocabulary!.find((v) => v.kind === "condition" && v.code === "acute_bronchitis")!
    expect(entry).toMatchObject({ label: "Acute bronchitis", system: "snomed", standard_code: "10509002" })
    expect(summary.unmapped).toContainEqual({ kind: "condition", code: "acute_bronchitis", standard: "snomed:10509002", label: "Acute bronchitis", patients: 1 })
    // Text alone is a concept too.
    expect(rowsOf("patient_conditions", "p5").map((r) => r.condition)).toEqual(["seasonal_allergies"])
  })
  it("mapped entries carry their primary standard code; refuted conditions are left out", () => {
    expect(t.vocabulary!.find((v) => v.kind === "condition" && v.code === "type_2_diabetes")).toMatchObject({ system: "snomed", standard_code: "44054006" })
    expect(rowsOf("patient_conditions", "p1").map((r) => r.condition)).not.toContain("asthma")
    expect(summary.left_out["Condition refuted or entered in error: left out"]).toBe(1)
  })
  it("a working diagnosis (verificationStatus provisional, differential) is left out and counted", () => {
    expect(rowsOf("patient_conditions", "p2").map((r) => r.condition)).not.toContain("asthma")
    expect(rowsOf("patient_conditions", "p3").map((r) => r.condition)).not.toContain("depression")
    expect(summary.left_out["Condition not confirmed (verificationStatus unconfirmed, provisional or differential): left out"]).toBe(2)
  })
})

describe("FHIR import: encounters", () => {
  it("class → kind (AMB outpatient, EMER emergency, IMP and ACUTE inpatient); unmapped classes and cancelled encounters left out", () => {
    expect(t.encounters!.map((e) => [e.patient_id, e.kind, e.start_date, e.end_date])).toEqual([
      ["1", "outpatient", "2024-01-10", "2024-01-10"],
      ["1", "emergency", "2024-03-02", "2024-03-02"],
      ["2", "inpatient", "2024-05-01", "2024-05-06"],
      ["3", "inpatient", "2024-02-01", "2024-02-03"]
    ])
    expect(summary.left_out["Encounter of class HH: not a visit the analytics count, left out"]).toBe(1)
    expect(summary.left_out["Encounter with status cancelled: left out"]).toBe(1)
  })
})

describe("FHIR import: drug courses and adherence", () => {
  // An era's source ids list each of its rows.
  const course = (source: string) => t.drug_exposures!.find((e) => t.source_ids!.some((s) => s.table_name === "drug_exposures" && s.id === e.id && (s.source_id ?? "").split(" ").includes(source)))!
  it("an RxNorm clinical drug maps to its ingredient; an ongoing (active) order has no end", () => {
    expect(course("MedicationRequest/mr1")).toMatchObject({ drug: "metformin", start_date: "2024-01-01", end_date: "" })
  })
  it("adherence is PDC from the patient's dispenses of the ingredient: 120 of the 366 days to as_of", () => {
    // 90 days from 2024-01-01, 30 from 2024-03-31 (the second supply starts after the first runs out); one without daysSupply left out.
    expect(Number(course("MedicationRequest/mr1").adherence)).toBeCloseTo(120 / 366, 4)
    expect(summary.left_out["MedicationDispense without daysSupply: left out of adherence"]).toBe(1)
  })
  it("no dispenses: adherence unknown (empty), never assumed", () => {
    expect(course("MedicationRequest/mr2")).toMatchObject({ drug: "lisinopril", start_date: "2024-01-01", end_date: "2024-06-29", adherence: "" })
  })
  it("a combination product maps to the ingredients its display names; a stopped order without an end lasts 30 days", () => {
    expect(course("MedicationRequest/mr3")).toMatchObject({ drug: "lisinopril", start_date: "2024-02-01", end_date: "2024-03-01" })
  })
  it("a contained Medication; a supply duration with refills sets the end", () => {
    expect(course("MedicationRequest/mr4")).toMatchObject({ drug: "metformin", start_date: "2024-03-01", end_date: "2024-08-27" })
  })
  it("MedicationStatement periods are courses; entered-in-error orders are left out", () => {
    expect(course("MedicationStatement/ms1")).toMatchObject({ drug: "atorvastatin", start_date: "2022-01-01", end_date: "2022-12-31", adherence: "" })
    expect(summary.left_out["MedicationRequest with status entered-in-error: left out"]).toBe(1)
  })
  it("an order and its dispenses are one era, traced to each", () => {
    const era = course("MedicationRequest/mr1")
    expect(t.source_ids!.find((s) => s.table_name === "drug_exposures" && s.id === era.id)!.source_id!.split(" ").filter((x) => x.startsWith("MedicationDispense/"))).toHaveLength(2)
  })
  it("dispenses without an order are exposure too: a supply starting 31 days after the last ran out begins a new era, and an era of one fill has no adherence", () => {
    const aspirin = t.drug_exposures!.filter((e) => e.drug === "aspirin").map((e) => [e.start_date, e.end_date, e.adherence])
    expect(aspirin).toEqual([["2024-01-01", "2024-01-30", ""], ["2024-03-01", "2024-03-30", ""]])
  })
})

describe("FHIR import: the axis model", () => {
  const scores = (source: string, month: string) => rowsOf("axis_scores", source).find((r) => r.month === month)!
  it("instruments → 0–10 on their axis, the month's mean, one decimal (PHQ-9 9 → 6.67, PHQ-2 3 → 5.0: ER 5.8)", () => {
    expect(scores("p1", "2024-01")).toMatchObject({ er: "5.8", po: "", nm: "" })
  })
  it("a direct axis observation wins over the month's instruments", () => {
    expect(scores("p1", "2024-02").er).toBe("8")
  })
  it("PRAPARE components score their axes; unanswered items and unscored values are left out", () => {
    // stress Very much → ER 0; social 3–5/week → SC 7.5; safe, no transport problem → ES 10;
    // housing, no worry, not seeking work, income 67,216 → PV (10 + 10 + 5 + 7) / 4 = 8; school → TA 6.
    // BMI 31.2 → NM 5 and HbA1c 7 % → NM 7.14: NM 6.1.
    expect(scores("p2", "2024-03")).toMatchObject({ er: "0", sc: "7.5", es: "10", pv: "8", ta: "6", nm: "6.1", po: "", rs: "" })
  })
  it("a value out of the instrument's range is left out and counted; entered-in-error observations too", () => {
    expect(scores("p3", "2024-05").po).toBe("6")
    expect(rowsOf("axis_scores", "p3").map((r) => r.month)).toEqual(["2024-05"])
    expect(summary.left_out["pain: value out of the instrument's range: left out"]).toBe(1)
    expect(summary.left_out["Observation with status entered-in-error: left out"]).toBe(1)
  })
  it("reports each axis's coverage; RS has no instrument and stays empty", () => {
    expect(summary.axis_coverage).toMatchObject({ RS: 0, ER: 0.4, SC: 0.2, PO: 0.2 })
  })
})

describe("FHIR import: implants and their outcomes", () => {
  it("an implant procedure (or one whose focal device is of an implant type) is an implant; its study is the performing organization (or the encounter's service provider, here a conditional reference)", () => {
    expect(t.device_implants!.map((i) => [i.patient_id, i.device, i.study_id, i.implant_date])).toEqual([
      ["1", "knee_implant", "org-a", "2024-01-15"],
      ["2", "cochlear_implant", "org-b", "2024-05-02"]
    ])
    expect(t.device_studies!.map((s) => [s.id, s.device, s.region])).toEqual([["org-a", "knee_implant", "northeast_us"], ["org-b", "cochlear_implant", "western_europe"]])
  })
  it("a revision within a year is a revision; a device infection is an infection and a complication", () => {
    const outcomes = (implant: string) => Object.fromEntries(t.device_outcomes!.filter((o) => o.implant_id === implant).map((o) => [o.metric, o.value]))
    expect(outcomes("1")).toEqual({ complication_rate: "0", device_failure_rate: "0", infection_rate: "0", revision_rate: "1" })
    expect(outcomes("2")).toEqual({ complication_rate: "1", device_failure_rate: "0", infection_rate: "1", revision_rate: "0" })
    expect(summary.left_out["Procedure not about an implant: left out"]).toBe(2)
  })
  it("a Medication or Substance a procedure used (usedReference) is not an implanted device", () => {
    expect(t.device_implants!.filter((i) => i.patient_id === patient("p3"))).toEqual([])
  })
})

describe("FHIR import: adverse events", () => {
  it("from AdverseEvent (suspected Medication) and from AllergyIntolerance reactions to a drug; other allergies left out", () => {
    expect(t.adverse_events!.map((e) => [e.patient_id, e.drug, e.event_type, e.date])).toEqual([
      ["3", "lisinopril", "nausea", "2024-04-10"],
      ["1", "penicillin_g", "wheal", "2023-05-01"]
    ])
    expect(summary.left_out["AllergyIntolerance to something other than a drug: left out"]).toBe(1)
  })
  it("a drug allergy resolved (clinicalStatus) or unconfirmed (verificationStatus) makes no adverse event, and is counted", () => {
    expect(t.adverse_events!.filter((e) => e.date === "2022-02-01" || e.date === "2022-03-01")).toEqual([])
    expect(summary.left_out["AllergyIntolerance resolved or inactive (clinicalStatus): left out"]).toBe(1)
    expect(summary.left_out["AllergyIntolerance not confirmed (verificationStatus unconfirmed): left out"]).toBe(1)
  })
})

describe("FHIR import: the summary", () => {
  it("counts resources read and types skipped, rows per table, and as_of as given", () => {
    expect(summary.read).toMatchObject({ Patient: 5, Encounter: 6, Observation: 11, Organization: 2 })
    expect(summary.skipped).toEqual({ Claim: 2 })
    expect(summary.rows).toMatchObject({ patients: 5, encounters: 4, device_implants: 2 })
    expect(summary.as_of).toBe("2024-12-31")
  })
  it("prints the same for people", () => {
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk"))])
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^imported 5 patients from 15 FHIR files .*; as_of 2025-06-01$/m)
    expect(r.stdout).toMatch(/not read \(types the service does not use\):\n {2}Claim: 2/)
    expect(r.stdout).toMatch(/condition acute_bronchitis \(snomed:10509002\): 1 patients/)
    // Progress phase by phase, and the summary's time per phase.
    for (const phase of ["reading", "staging", "writing"]) expect(r.stderr).toMatch(new RegExp(`^importing FHIR: ${phase} 100% \\(\\d+\\.\\d s\\)$`, "m"))
    // A small export: read on the importing thread (parse-threads.test.ts).
    expect(r.stdout).toMatch(/^time: reading \d+(\.\d)? s, staging \d+(\.\d)? s, writing \d+(\.\d)? s \(read on this thread\)$/m)
  })
})

describe("FHIR import: bad input imports nothing", () => {
  const files = ehrFiles()
  const variant = (file: string, edit: (lines: Array<object | string>) => void) => {
    const lines: Array<object | string> = [...(files[file] ?? [])]
    edit(lines)
    return writeEhrExport(join(tempDataDir(), "bad"), { ...files, [file]: lines })
  }
  let target: string
  let before: string
  beforeAll(() => {
    target = tempDataDir()
    hcc(target, ["data", "generate", "--patients", "200", "--seed", "3"])
    before = datasetDigest(target)
  })
  it.each([
    ["a line that is not JSON", "Condition.ndjson", (l: Array<object | string>) => l.splice(2, 0, "{not json"), /Condition\.ndjson:3: not JSON: /],
    ["a resource missing what the mapping needs", "Encounter.ndjson", (l: Array<object | string>) => (l[1] = { ...(l[1] as object), subject: undefined }), /Encounter\.ndjson:2: Encounter\.subject: is required/],
    ["a reference to a patient not in the export", "Condition.ndjson", (l: Array<object | string>) => (l[0] = { ...(l[0] as object), subject: { reference: "Patient/nobody" } }), /Condition\.ndjson:1: Condition\.subject: Patient nobody is not in the export/],
    ["a conditional reference no patient's identifier matches", "Condition.ndjson", (l: Array<object | string>) => (l[0] = { ...(l[0] as object), subject: { reference: "Patient?identifier=urn:x|404" } }), /Condition\.ndjson:1: Condition\.subject: Patient with identifier urn:x\|404 is not in the export/],
    ["an unparseable date", "Procedure.ndjson", (l: Array<object | string>) => (l[1] = { ...(l[1] as object), performedDateTime: "2024-13-01" }), /Procedure\.ndjson:2: Procedure\.performedDateTime: '2024-13-01' is not a FHIR date or dateTime/],
    ["an unparseable quantity", "Observation.1.ndjson", (l: Array<object | string>) => (l[0] = { ...(l[0] as object), valueQuantity: { value: "nine" } }), /Observation\.1\.ndjson:1: Observation\.valueQuantity\.value: "nine" is not a number/],
    ["a resource of another type than its file", "Encounter.ndjson", (l: Array<object | string>) => l.push({ resourceType: "Patient", id: "x" }), /Encounter\.ndjson:7: resourceType: 'Patient' in a file of Encounter resources/],
    ["two patients with one id", "Patient.ndjson", (l: Array<object | string>) => l.push({ ...(l[0] as object) }), /Patient\.ndjson:6: Patient\.id: 'p1' is also the id of the Patient at Patient\.ndjson:1; without meta\.lastUpdated/]
  ])("%s", (_, file, edit, message) => {
    // --strict: a reference to a patient the export lacks is a problem too (else left out and counted: orphans.test.ts).
    const r = tryHcc(target, ["data", "import", "--format", "fhir", "--strict", variant(file, edit)])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/nothing was imported: \d+ problems?/)
    expect(r.stderr).toMatch(message)
    expect(datasetDigest(target)).toBe(before)
  })
  it("lists the first 50 problems, then a count", () => {
    const r = tryHcc(target, ["data", "import", "--format", "fhir", variant("Observation.1.ndjson", (l) => {
      for (let i = 0; i < 60; i++) l.push("not json")
    })])
    expect(r.stderr).toMatch(/nothing was imported: 60 problems/)
    expect(r.stderr).toMatch(/… and 10 more/)
  })
  it("unknown code systems and unmapped codes are not errors", () => {
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "fhir", variant("Condition.ndjson", (l) => l.push({ resourceType: "Condition", id: "cx", subject: { reference: "Patient/p3" }, code: { coding: [{ system: "http://example.org/local-codes", code: "X-1", display: "Local finding" }] } }))])
    expect(r.status).toBe(0)
  })
})

describe("FHIR import: an operator's own axis model and region map", () => {
  it("--axis-model: another instrument scores its axis; a wrong file names the path and the reason", () => {
    const model = JSON.parse(readFileSync(join(ROOT, "src/pipeline/axis-model.json"), "utf8")) as { instruments: Array<Record<string, unknown>>; version: string }
    model.version = "9.9.9"
    model.instruments.push({
      id: "heart_rate",
      name: "Heart rate",
      code: { system: "http://loinc.org", code: "8867-4" },
      axis: "RS",
      transform: { type: "linear", range: [40, 120], direction: "lower_is_better" },
      rationale: "a test instrument",
      source: "this test"
    })
    const file = join(tempDataDir(), "model.json")
    writeFileSync(file, JSON.stringify(model))
    const dir = tempDataDir()
    const s = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk")), "--axis-model", file, "--json"]))
    expect(s.axis_model).toBe("9.9.9")
    // 72 /min → 10 × (1 − 32/80) = 6.
    expect(tablesOf(dir).axis_scores!.find((r) => r.patient_id === "3" && r.month === "2024-04")!.rs).toBe("6")
    model.instruments.push({ id: "bad", name: "bad", code: { system: "http://loinc.org", code: "1-8" }, axis: "XX", transform: { type: "linear", range: [5, 1], direction: "up" }, rationale: "", source: "" })
    writeFileSync(file, JSON.stringify(model))
    const r = tryHcc(tempDataDir(), ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk")), "--axis-model", file])
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/model\.json: \/instruments\/\d+\/axis: /)
  })

  it("--region-map: the operator's regions", () => {
    const map = {
      regions: [{ code: "new_england", label: "New England" }, { code: "elsewhere", label: "Elsewhere" }],
      us_states: [{ code: "MA", name: "Massachusetts", region: "new_england" }],
      countries: [],
      fallback: "elsewhere"
    }
    const file = join(tempDataDir(), "regions.json")
    writeFileSync(file, JSON.stringify(map))
    const dir = tempDataDir()
    hcc(dir, ["data", "import", "--format", "fhir", writeEhrExport(join(tempDataDir(), "bulk")), "--region-map", file])
    const t = tablesOf(dir)
    expect(t.patients!.map((p) => p.region)).toEqual(["new_england", "elsewhere", "elsewhere", "elsewhere", "elsewhere"])
    expect(t.vocabulary!.find((v) => v.kind === "region" && v.code === "new_england")!.label).toBe("New England")
  })
})

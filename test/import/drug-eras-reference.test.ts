/**
 * The second reading of the drug-exposure conventions (test/support/drugEras.ts), pinned rule by rule
 * on tiny hand-made cases — 30-day persistence window, current medications, death, end-date
 * defaults, PQA PDC with shifted overlapping fills, combination products, exposed person-months —
 * and the realistic fixture builders (test/support/realWorldFixtures.ts) run once for their shape.
 * Pure: no server, no importer.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type Era, exposedPersonMonths, fhirEras, omopEras, type OmopTables, readCsv, type Rows } from "../support/drugEras.ts"
import { cmsClaimsOmop, etlSyntheaOmop, fhirClaimsAndOrders } from "../support/realWorldFixtures.ts"

const AS_OF = "2024-12-31"
const EHR = "32838" // EHR prescription: not a fill
const PHARMACY = "38000175" // Prescription dispensed in pharmacy: a fill

/** A DRUG_EXPOSURE row; concept 1503297 (metformin) unless told. */
const de = (id: number, person: number, start: string, end: string, more: Partial<Record<string, string>> = {}): Record<string, string> => ({
  drug_exposure_id: String(id), person_id: String(person), drug_concept_id: "1503297", drug_exposure_start_date: start, drug_exposure_end_date: end,
  verbatim_end_date: end, drug_type_concept_id: EHR, days_supply: "", ...more
} as Record<string, string>)
const current = (id: number, person: number, start: string, more: Partial<Record<string, string>> = {}) =>
  de(id, person, start, start, { verbatim_end_date: "", days_supply: "0", ...more })
const fill = (id: number, person: number, start: string, days: number, end: string) => de(id, person, start, end, { drug_type_concept_id: PHARMACY, days_supply: String(days) })
const persons = (...ids: Array<number>): Rows => ids.map((id) => ({ person_id: String(id) }))
const concept = (id: number, name: string, cls: string, code: string) => ({ concept_id: String(id), concept_name: name, concept_class_id: cls, vocabulary_id: "RxNorm", concept_code: code })
const VOCAB = {
  concept: [
    concept(1503297, "metformin", "Ingredient", "6809"), concept(1308216, "lisinopril", "Ingredient", "29046"), concept(974166, "hydrochlorothiazide", "Ingredient", "5487"),
    concept(1332418, "amlodipine", "Ingredient", "17767"), concept(1332419, "amlodipine 5 MG Oral Tablet", "Clinical Drug", "197361"),
    concept(2000000101, "hydrochlorothiazide 12.5 MG / lisinopril 10 MG Oral Tablet", "Clinical Drug", "197885")
  ],
  concept_ancestor: [
    { ancestor_concept_id: "1332418", descendant_concept_id: "1332419" },
    { ancestor_concept_id: "1308216", descendant_concept_id: "2000000101" },
    { ancestor_concept_id: "974166", descendant_concept_id: "2000000101" }
  ]
}
const eras = (cdm: Partial<OmopTables> & Pick<OmopTables, "drug_exposure">, asOf = AS_OF) =>
  omopEras({ person: cdm.person ?? persons(1, 2, 3, 4, 5, 6, 7, 8, 9), ...VOCAB, ...cdm }, asOf)
const spans = (list: ReadonlyArray<Era>) => list.map((e) => [e.person, e.ingredient, e.start, e.end])

describe("OMOP exposure rows (§1)", () => {
  it("end: the end date; else start + days_supply − 1; else start + 29 (mail order + 89, an administration its day); an end before its start is one day", () => {
    expect(spans(eras({
      drug_exposure: [
        de(1, 1, "2021-01-01", "", { days_supply: "10" }),
        de(2, 2, "2021-01-01", ""),
        de(3, 3, "2020-05-10", "2020-05-01"),
        de(4, 4, "2020-05-10", "2020-06-10", { days_supply: "5" }),
        de(5, 5, "2021-01-01", "", { drug_type_concept_id: "32857" }),
        de(6, 6, "2021-01-01", "", { drug_type_concept_id: "32818" })
      ]
    }))).toEqual([
      ["1", "6809", "2021-01-01", "2021-01-10"],
      ["2", "6809", "2021-01-01", "2021-01-30"],
      ["3", "6809", "2020-05-10", "2020-05-10"],
      ["4", "6809", "2020-05-10", "2020-06-10"],
      ["5", "6809", "2021-01-01", "2021-03-31"],
      ["6", "6809", "2021-01-01", "2021-01-01"]
    ])
  })

  it("a current medication (end = start, days_supply 0, no verbatim end) is ongoing, or ends with the observation period that holds it when that ends before as_of", () => {
    const obs = (person: number, start: string, end: string) => ({ person_id: String(person), observation_period_start_date: start, observation_period_end_date: end })
    expect(spans(eras({
      drug_exposure: [
        current(1, 1, "2023-05-01"), // no observation period: ongoing
        current(2, 2, "2023-05-01"), // period ends before as_of: ends with it
        current(3, 3, "2023-05-01"), // period reaches as_of: ongoing
        current(4, 4, "2023-05-01", { days_supply: "" }), // days_supply empty: a one-day row (an administration may look so), not current
        de(5, 5, "2023-05-01", "2023-05-01", { days_supply: "0" }), // verbatim end = start: a one-day course
        current(6, 6, "2023-05-01"), // the only period does not hold its start: ongoing
        current(7, 7, "2023-05-01"), // died before the period ended: ends at death
        current(8, 8, "2023-05-01") // no period, died: ends at death
      ],
      observation_period: [obs(2, "2020-01-01", "2023-09-30"), obs(3, "2020-01-01", AS_OF), obs(4, "2020-01-01", "2024-12-30"), obs(6, "2010-01-01", "2015-12-31"), obs(7, "2020-01-01", "2023-09-30")],
      death: [{ person_id: "7", death_date: "2023-08-01" }, { person_id: "8", death_date: "2024-02-10" }]
    }))).toEqual([
      ["1", "6809", "2023-05-01", null],
      ["2", "6809", "2023-05-01", "2023-09-30"],
      ["3", "6809", "2023-05-01", null],
      ["4", "6809", "2023-05-01", "2023-05-01"],
      ["5", "6809", "2023-05-01", "2023-05-01"],
      ["6", "6809", "2023-05-01", null],
      ["7", "6809", "2023-05-01", "2023-08-01"],
      ["8", "6809", "2023-05-01", "2024-02-10"]
    ])
  })

  it("an ingredient is itself; a clinical drug maps through CONCEPT_ANCESTOR; a combination product gives one era per ingredient; without ancestry the drug concept itself", () => {
    const list = eras({
      drug_exposure: [
        de(1, 1, "2022-01-01", "2022-01-31", { drug_concept_id: "2000000101" }),
        de(2, 2, "2022-01-01", "2022-01-31", { drug_concept_id: "1332419" }),
        de(3, 3, "2022-01-01", "2022-01-31", { drug_concept_id: "19019073" })
      ]
    })
    expect(list.map((e) => [e.person, e.ingredient, e.rows])).toEqual([
      ["1", "5487", ["1"]],
      ["1", "29046", ["1"]],
      ["2", "17767", ["2"]],
      ["3", "19019073", ["3"]]
    ])
  })

  it("rows of persons not in PERSON are ignored", () => {
    expect(eras({ person: persons(1), drug_exposure: [de(1, 1, "2022-01-01", "2022-01-31"), de(2, 99, "2022-01-01", "2022-01-31")] }).map((e) => e.person)).toEqual(["1"])
  })
})

describe("death ends everything (§2)", () => {
  it("a row starting after death is dropped; ends are capped at death; a row starting on the death date is kept", () => {
    const list = eras({
      drug_exposure: [
        de(1, 1, "2020-12-15", "2021-01-14"),
        de(2, 1, "2021-02-01", "2021-02-28"),
        de(3, 1, "2021-01-01", "2021-01-31", { drug_concept_id: "1308216" }),
        de(4, 2, "2021-02-01", "2021-02-28")
      ],
      death: [{ person_id: "1", death_date: "2021-01-01" }, { person_id: "2", death_date: "2021-01-01" }]
    })
    expect(list.map((e) => [e.person, e.ingredient, e.start, e.end, e.rows])).toEqual([
      ["1", "6809", "2020-12-15", "2021-01-01", ["1"]],
      ["1", "29046", "2021-01-01", "2021-01-01", ["3"]]
    ])
  })
})

describe("eras: 30-day persistence window (§3)", () => {
  it("a start 30 days after the latest end joins; 31 days starts a new era", () => {
    expect(spans(eras({
      drug_exposure: [
        de(1, 1, "2020-01-01", "2020-01-31"), de(2, 1, "2020-03-01", "2020-03-10"), // Mar 1 − Jan 31 = 30 (2020 is a leap year)
        de(3, 2, "2020-01-01", "2020-01-31"), de(4, 2, "2020-03-02", "2020-03-10") // 31
      ]
    }))).toEqual([
      ["1", "6809", "2020-01-01", "2020-03-10"],
      ["2", "6809", "2020-01-01", "2020-01-31"],
      ["2", "6809", "2020-03-02", "2020-03-10"]
    ])
  })

  it("the latest end so far, not the previous row's, decides; an ongoing row makes the era ongoing", () => {
    expect(spans(eras({
      drug_exposure: [de(1, 1, "2020-01-01", "2020-12-31"), de(2, 1, "2020-02-01", "2020-02-10"), de(3, 1, "2021-01-20", "2021-01-25"), current(4, 1, "2021-02-20")]
    }))).toEqual([["1", "6809", "2020-01-01", null]])
  })
})

describe("adherence: PQA proportion of days covered (§4)", () => {
  it("a fill starting before the previous supply ran out starts the day after; covered days counted inside the era", () => {
    const [era] = eras({ drug_exposure: [fill(1, 1, "2024-01-01", 30, "2024-01-30"), fill(2, 1, "2024-01-21", 30, "2024-02-19"), fill(3, 1, "2024-03-15", 30, "2024-04-13")] })
    // Era Jan 1 – Apr 13 (104 days); fills Jan 1–30, Jan 31–Feb 29 (shifted), Mar 15–Apr 13: 90 days. Unshifted it would be 80.
    expect(era).toMatchObject({ start: "2024-01-01", end: "2024-04-13", adherence: Math.round((90 / 104) * 1e4) / 1e4, rows: ["1", "2", "3"] })
    expect(era!.adherence).toBe(0.8654)
    // Era Jan 1 – Mar 10 (70 days): Jan 1–10, Feb 1–Mar 1, and the Feb 10 fill shifted to Mar 2–31, counted to Mar 10 only:
    // 10 + 30 + 9 = 49 (summing supplies unshifted would give 70, i.e. 1).
    const [clipped] = eras({ drug_exposure: [fill(1, 1, "2024-01-01", 10, "2024-01-10"), fill(2, 1, "2024-02-01", 30, "2024-03-01"), fill(3, 1, "2024-02-10", 30, "2024-03-10")] })
    expect(clipped).toMatchObject({ start: "2024-01-01", end: "2024-03-10", adherence: 0.7 })
    // Three same-day fills cascade: Jan 1–30, Jan 31–Feb 29, Mar 1–30 (to Mar 15); an EHR row opens the era on Dec 1: 75 / 106.
    const [cascade] = eras({ drug_exposure: [de(1, 1, "2023-12-01", "2024-03-15"), fill(2, 1, "2024-01-01", 30, "2024-01-30"), fill(3, 1, "2024-01-01", 30, "2024-01-30"), fill(4, 1, "2024-01-01", 30, "2024-01-30")] })
    expect(cascade).toMatchObject({ start: "2023-12-01", end: "2024-03-15", adherence: Math.round((75 / 106) * 1e4) / 1e4 })
  })

  it("fewer than two fills: unknown, never 1 or 0; non-dispensing types and days_supply 0 are not fills", () => {
    const list = eras({
      drug_exposure: [
        fill(1, 1, "2024-01-01", 30, "2024-01-30"),
        de(2, 2, "2024-01-01", "2024-01-30", { days_supply: "30" }), de(3, 2, "2024-02-01", "2024-03-01", { days_supply: "30" }),
        de(4, 3, "2024-01-01", "2024-01-01", { drug_type_concept_id: "32869", days_supply: "0" }), fill(5, 3, "2024-01-02", 30, "2024-01-31")
      ]
    })
    expect(list.map((e) => [e.person, e.adherence])).toEqual([["1", null], ["2", null], ["3", null]])
  })

  it("every dispensing type counts (38000175, 38000176, 32869, 32825, 32857); an ongoing era is measured to as_of", () => {
    const types = ["38000176", "32869", "32825", "32857"]
    const list = eras({
      drug_exposure: [
        ...types.map((type, k) => de(k + 1, k + 1, "2024-01-01", "2024-01-30", { drug_type_concept_id: type, days_supply: "30" })),
        ...types.map((type, k) => de(k + 11, k + 1, "2024-02-01", "2024-03-01", { drug_type_concept_id: type, days_supply: "30" })),
        fill(21, 5, "2024-11-01", 30, "2024-11-30"), fill(22, 5, "2024-12-01", 30, "2024-12-30"), current(23, 5, "2024-12-15")
      ]
    })
    // Jan 1 – Mar 1 is 61 days, 60 covered; Nov 1 – Dec 31 (as_of) likewise.
    expect(list.map((e) => [e.person, e.end, e.adherence])).toEqual([
      ["1", "2024-03-01", 0.9836], ["2", "2024-03-01", 0.9836], ["3", "2024-03-01", 0.9836], ["4", "2024-03-01", 0.9836], ["5", null, 0.9836]
    ])
  })
})

describe("FHIR R4 (§1)", () => {
  const rx = (code: string) => ({ coding: [{ system: "http://www.nlm.nih.gov/research/umls/rxnorm", code }] })
  const C4BB = "http://hl7.org/fhir/us/carin-bb/CodeSystem/C4BBSupportingInfoType"
  const eob = (id: string, patient: string, product: any, date: { servicedDate?: string; billable: string }, days: number, more: any = {}) => ({
    resourceType: "ExplanationOfBenefit", id, status: "active", patient: { reference: `Patient/${patient}` },
    type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/claim-type", code: "pharmacy" }] }, billablePeriod: { start: date.billable },
    supportingInfo: [
      { sequence: 1, category: { coding: [{ system: C4BB, code: "refillnum" }] }, valueQuantity: { value: 1 } },
      { sequence: 2, category: { coding: [{ system: C4BB, code: "dayssupply" }] }, valueQuantity: { value: days, unit: "d" } }
    ],
    item: [{ sequence: 1, productOrService: product, ...(date.servicedDate === undefined ? {} : { servicedDate: date.servicedDate }) }], ...more
  })
  const resources = [
    { resourceType: "Patient", id: "p1" },
    { resourceType: "Patient", id: "p2", deceasedDateTime: "2024-06-15T23:30:00-05:00" },
    { resourceType: "Patient", id: "p3" },
    { resourceType: "Patient", id: "p4" },
    { resourceType: "Medication", id: "med1", code: rx("5487") },
    { resourceType: "MedicationRequest", id: "mr1", status: "active", intent: "order", subject: { reference: "Patient/p1" }, medicationCodeableConcept: rx("29046"), authoredOn: "2024-01-10T08:00:00Z" },
    {
      resourceType: "MedicationRequest", id: "mr2", status: "completed", intent: "order", subject: { reference: "Patient/p1" }, medicationCodeableConcept: rx("6809"), authoredOn: "2024-01-20",
      dosageInstruction: [{ timing: { repeat: { boundsPeriod: { start: "2024-02-01" } } } }], dispenseRequest: { numberOfRepeatsAllowed: 2, expectedSupplyDuration: { value: 30, unit: "days", code: "d" } }
    },
    { resourceType: "MedicationRequest", id: "mr3", status: "stopped", intent: "plan", subject: { reference: "Patient/p1" }, medicationCodeableConcept: rx("36567"), authoredOn: "2024-03-01" },
    { resourceType: "MedicationRequest", id: "mr4", status: "cancelled", intent: "order", subject: { reference: "Patient/p1" }, medicationCodeableConcept: rx("17767"), authoredOn: "2024-03-01" },
    { resourceType: "MedicationRequest", id: "mr5", status: "active", intent: "order", subject: { reference: "Patient/p2" }, medicationCodeableConcept: rx("29046"), authoredOn: "2023-01-01" },
    {
      resourceType: "MedicationRequest", id: "mr6", status: "completed", intent: "order", subject: { reference: "Patient/p1" }, medicationReference: { reference: "Medication/med1" },
      dosageInstruction: [{ timing: { repeat: { boundsPeriod: { start: "2024-05-01", end: "2024-05-20" } } } }]
    },
    { resourceType: "MedicationRequest", id: "mr7", status: "active", intent: "order", subject: { reference: "Patient/ghost" }, medicationCodeableConcept: rx("29046"), authoredOn: "2024-01-01" },
    { resourceType: "MedicationDispense", id: "md1", status: "completed", subject: { reference: "Patient/p3" }, medicationCodeableConcept: rx("6809"), whenHandedOver: "2024-01-01T10:00:00Z", daysSupply: { value: 30, unit: "day", code: "d" } },
    { resourceType: "MedicationDispense", id: "md2", subject: { reference: "Patient/p3" }, medicationCodeableConcept: rx("6809"), whenHandedOver: "2024-02-10", daysSupply: { value: 4, unit: "wk", code: "wk" } },
    { resourceType: "MedicationDispense", id: "md3", status: "cancelled", subject: { reference: "Patient/p3" }, medicationCodeableConcept: rx("6809"), whenHandedOver: "2024-03-01", daysSupply: { value: 30, code: "d" } },
    { resourceType: "MedicationDispense", id: "md4", status: "completed", subject: { reference: "Patient/p3" }, medicationCodeableConcept: rx("6809"), whenHandedOver: "2024-09-01", daysSupply: { value: 30, code: "d" } },
    eob("e1", "p4", rx("6809"), { servicedDate: "2024-01-05", billable: "2024-01-04" }, 90),
    eob("e2", "p4", { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "00093104801" }] }, { billable: "2024-04-20" }, 90),
    eob("e3", "p4", rx("6809"), { servicedDate: "2024-03-01", billable: "2024-03-01" }, 90, { status: "cancelled" }),
    eob("e4", "p4", rx("6809"), { servicedDate: "2024-03-01", billable: "2024-03-01" }, 90, { type: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/claim-type", code: "professional" }] } }),
    eob("e5", "p4", { coding: [{ system: "http://hl7.org/fhir/sid/ndc", code: "99999999999" }] }, { servicedDate: "2024-03-01", billable: "2024-03-01" }, 90)
  ]

  it("orders, dispenses and pharmacy EOBs, each by its own rule", () => {
    expect(fhirEras(resources, AS_OF, { "00093104801": "6809" }).map((e) => [e.person, e.ingredient, e.start, e.end, e.adherence, e.rows])).toEqual([
      ["p1", "5487", "2024-05-01", "2024-05-20", null, ["MedicationRequest/mr6"]], // a referenced Medication's code
      ["p1", "6809", "2024-02-01", "2024-04-30", null, ["MedicationRequest/mr2"]], // 30 d × (1 + 2 repeats) − 1
      ["p1", "29046", "2024-01-10", null, null, ["MedicationRequest/mr1"]], // active, no end: ongoing
      ["p1", "36567", "2024-03-01", "2024-03-30", null, ["MedicationRequest/mr3"]], // stopped, no end: + 29
      ["p2", "29046", "2023-01-01", "2024-06-15", null, ["MedicationRequest/mr5"]], // ongoing, ends at death (the written date)
      // Jan 1 – Mar 8 (68 days): 30 + 28 (4 wk) covered.
      ["p3", "6809", "2024-01-01", "2024-03-08", 0.8529, ["MedicationDispense/md1", "MedicationDispense/md2"]],
      ["p3", "6809", "2024-09-01", "2024-09-30", null, ["MedicationDispense/md4"]],
      // Jan 5 – Jul 18 (196 days): 90 + 90; the NDC item dated by billablePeriod.start.
      ["p4", "6809", "2024-01-05", "2024-07-18", 0.9184, ["ExplanationOfBenefit/e1", "ExplanationOfBenefit/e2"]]
    ])
  })
})

describe("exposed person-months (§5)", () => {
  it("distinct (person, ingredient, month) of the 120 months ending with as_of's month", () => {
    const era = (person: string, ingredient: string, start: string, end: string | null): Era => ({ person, ingredient, start, end, adherence: null, rows: [] })
    const months = (...list: Array<Era>) => exposedPersonMonths(list, "2024-06-30")
    const sameMonth = [era("1", "A", "2024-01-31", "2024-02-01"), era("1", "A", "2024-02-15", "2024-02-20")] // Jan, Feb; Feb already counted
    const ongoing = era("1", "B", "2024-02-01", null) // Feb – Jun (as_of's month)
    const whole = era("2", "A", "2000-01-01", "2030-01-01") // the whole panel, nothing outside it
    const before = era("3", "A", "2014-06-01", "2014-06-30") // the month before the panel
    const firstMonth = era("3", "A", "2014-06-30", "2014-07-01") // Jul 2014, the panel's first month
    expect(months(...sameMonth)).toBe(2)
    expect(months(ongoing)).toBe(5)
    expect(months(whole)).toBe(120)
    expect(months(before)).toBe(0)
    expect(months(firstMonth)).toBe(1)
    expect(months(...sameMonth, ongoing, whole, before, firstMonth)).toBe(2 + 5 + 120 + 1)
  })
})

describe("readCsv", () => {
  it("reads RFC 4180: quoted commas, doubled quotes, line breaks in quotes, CRLF, empty fields, lower-cased header", () => {
    expect(readCsv('A,B,c\r\n1,"x, y","say ""hi"""\r\n2,,\n3,"two\nlines",z')).toEqual([
      { a: "1", b: "x, y", c: 'say "hi"' },
      { a: "2", b: "", c: "" },
      { a: "3", b: "two\nlines", c: "z" }
    ])
  })
})

describe("realistic fixtures", () => {
  const root = mkdtempSync(join(tmpdir(), "drug-eras-"))
  const shape = (list: ReadonlyArray<Era>) => ({
    known: list.some((e) => e.adherence !== null),
    unknown: list.some((e) => e.adherence === null),
    ongoing: list.some((e) => e.end === null)
  })
  const sameAsWritten = (folder: string, tables: Record<string, Rows>) => {
    for (const [name, rows] of Object.entries(tables)) {
      expect(existsSync(join(folder, `${name}.csv`)), name).toBe(true)
      expect(readCsv(readFileSync(join(folder, `${name}.csv`), "utf8")), name).toEqual(rows)
    }
  }

  it("ETL-Synthea OMOP: chains, current rows, a clinical drug, a combination product; PDC known and unknown; ongoing eras", () => {
    const folder = join(root, "synthea")
    const { asOf, tables } = etlSyntheaOmop(folder, 7)
    sameAsWritten(folder, tables)
    expect(tables.person.length).toBeGreaterThanOrEqual(50)
    expect(tables.person.length).toBeLessThanOrEqual(200)
    for (const t of ["death", "observation_period", "drug_exposure", "concept", "concept_ancestor"] as const) expect(tables[t].length, t).toBeGreaterThan(0)
    expect(tables.cdm_source[0]!.source_release_date).toBe(asOf)
    expect(new Set(tables.drug_exposure.map((r) => r.drug_type_concept_id))).toEqual(new Set(["32869", "32838"]))
    expect(tables.drug_exposure.some((r) => r.days_supply === "0" && r.verbatim_end_date === "")).toBe(true)
    expect(tables.observation_period.some((r) => (r.observation_period_end_date ?? "") < asOf)).toBe(true)
    const list = omopEras(tables, asOf)
    expect(shape(list)).toEqual({ known: true, unknown: true, ongoing: true })
    expect(list.some((e) => e.ingredient === "17767")).toBe(true)
    const rowIngredients = new Map<string, Set<string>>()
    for (const e of list) for (const id of e.rows) rowIngredients.set(id, (rowIngredients.get(id) ?? new Set()).add(e.ingredient))
    expect([...rowIngredients.values()].some((s) => s.has("29046") && s.has("5487"))).toBe(true)
    expect(JSON.stringify(etlSyntheaOmop(join(root, "synthea-again"), 7))).toBe(JSON.stringify({ asOf, tables }))
  })

  it("ETL-CMS claims OMOP: 30/90-day fills, PDC known and unknown", () => {
    const folder = join(root, "cms")
    const { asOf, tables } = cmsClaimsOmop(folder, 11)
    sameAsWritten(folder, tables)
    expect(tables.person.length).toBeGreaterThanOrEqual(50)
    expect(tables.drug_exposure.length).toBeGreaterThan(0)
    expect(new Set(tables.drug_exposure.map((r) => r.days_supply))).toEqual(new Set(["30", "90"]))
    const list = omopEras(tables, asOf)
    expect(shape(list)).toMatchObject({ known: true, unknown: true })
    expect(list.filter((e) => e.adherence !== null).every((e) => e.adherence! > 0 && e.adherence! <= 1)).toBe(true)
  })

  it("FHIR Bulk Data NDJSON (no manifest): orders, dispenses, CARIN BB pharmacy EOBs; PDC known and unknown; ongoing eras", () => {
    const folder = join(root, "fhir")
    const { asOf, resources, ndcToRxnorm } = fhirClaimsAndOrders(folder, 3)
    expect(readdirSync(folder).sort()).toEqual(["ExplanationOfBenefit.ndjson", "MedicationDispense.ndjson", "MedicationRequest.ndjson", "Patient.ndjson"])
    const onDisk = readdirSync(folder).flatMap((f) => readFileSync(join(folder, f), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l)))
    expect(onDisk.length).toBe(resources.length)
    for (const type of ["Patient", "MedicationRequest", "MedicationDispense", "ExplanationOfBenefit"]) expect(resources.filter((r) => r.resourceType === type).length, type).toBeGreaterThan(0)
    expect(resources.every((r) => typeof r.id === "string" && typeof r.meta?.lastUpdated === "string")).toBe(true)
    expect(resources.some((r) => r.resourceType === "Patient" && r.deceasedDateTime !== undefined)).toBe(true)
    const list = fhirEras(onDisk, asOf, ndcToRxnorm)
    expect(shape(list)).toEqual({ known: true, unknown: true, ongoing: true })
    expect(list.some((e) => e.rows.some((id) => id.startsWith("ExplanationOfBenefit/")))).toBe(true)
  })
})

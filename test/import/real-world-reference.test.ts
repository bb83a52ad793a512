/**
 * The import beside a second reading of the conventions (test/support/drugEras.ts, written from
 * OHDSI's DRUG_ERA, the CDM's DRUG_EXPOSURE rules, PQA's PDC, FHIR R4 and CARIN Blue Button, not
 * from the importer): on realistic fixtures shaped like ETL-Synthea's OMOP, ETL-CMS's claims OMOP
 * and a FHIR export of orders, dispenses and pharmacy claims, the eras stored (person, ingredient,
 * start, end, adherence, the source rows each holds) and the exposed person-months equal the
 * reading's.
 */
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type Era, exposedPersonMonths, fhirEras, omopEras } from "../support/drugEras.ts"
import { cmsClaimsOmop, etlSyntheaOmop, fhirClaimsAndOrders } from "../support/realWorldFixtures.ts"
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

/** The stored eras in the reading's terms: the source's person id, the ingredient's RxNorm code, the source rows. */
const storedEras = (t: Record<string, Table>, format: "omop" | "fhir"): Array<Era> => {
  const person = new Map(t.source_ids!.filter((s) => s.table_name === "patients").map((s) => [s.id!, s.source_id!.replace(/^(person|Patient)\//, "")]))
  const rxnorm = new Map(t.vocabulary!.filter((v) => v.kind === "drug" && v.system === "rxnorm").map((v) => [v.code!, v.standard_code!]))
  const sources = new Map(t.source_ids!.filter((s) => s.table_name === "drug_exposures").map((s) => [s.id!, s.source_id!.split(" ")]))
  return t.drug_exposures!.filter((d) => rxnorm.has(d.drug!)).map((d) => ({
    person: person.get(d.patient_id!)!,
    ingredient: rxnorm.get(d.drug!)!,
    start: d.start_date!,
    end: d.end_date === "" ? null : d.end_date!,
    adherence: d.adherence === "" ? null : Number(d.adherence),
    rows: (sources.get(d.id!) ?? []).map((src) => (format === "omop" ? src.replace(/^drug_exposure\//, "") : src))
  }))
}

const key = (e: Era) => `${e.person}|${e.ingredient}|${e.start}`
const sorted = (eras: ReadonlyArray<Era>) => [...eras].map((e) => ({ ...e, rows: [...e.rows].sort() })).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))

describe.each([
  ["ETL-Synthea-shaped OMOP (chains of renewals, current 0-day rows, gaps, deaths, clinical drugs, a combination)", "omop", (dir: string) => etlSyntheaOmop(dir, 7)],
  ["ETL-CMS-shaped claims OMOP (pharmacy fills with days supply, late refills, resumed therapies)", "omop", (dir: string) => cmsClaimsOmop(dir, 11)]
] as const)("%s", (_, format, build) => {
  let stored: Array<Era>
  let reference: Array<Era>
  let asOf: string
  beforeAll(() => {
    const folder = join(tempDataDir(), "cdm")
    const fixture = build(folder)
    asOf = fixture.asOf
    const dir = tempDataDir()
    hcc(dir, ["data", "import", "--format", format, folder])
    stored = sorted(storedEras(tablesOf(dir), format))
    reference = sorted(omopEras(fixture.tables, asOf))
  })
  it("the eras stored are the reading's, row for row", () => {
    expect(stored.length).toBeGreaterThan(20)
    expect(stored).toEqual(reference)
  })
  it("so are the exposed person-months, and the adherence known and unknown", () => {
    expect(exposedPersonMonths(stored, asOf)).toBe(exposedPersonMonths(reference, asOf))
    expect(stored.filter((e) => e.adherence !== null).length).toBeGreaterThan(0)
    expect(stored.filter((e) => e.adherence === null).length).toBeGreaterThan(0)
  })
})

describe("a FHIR export of orders, dispenses and CARIN Blue Button pharmacy claims", () => {
  it("the eras stored are the reading's (claims coded by RxNorm; NDC-coded ones are drugs of their own without a crosswalk)", () => {
    const folder = join(tempDataDir(), "bulk")
    const fixture = fhirClaimsAndOrders(folder, 5)
    const dir = tempDataDir()
    hcc(dir, ["data", "import", "--format", "fhir", folder, "--as-of", fixture.asOf])
    const stored = sorted(storedEras(tablesOf(dir), "fhir"))
    const reference = sorted(fhirEras(fixture.resources, fixture.asOf))
    expect(stored.length).toBeGreaterThan(20)
    expect(stored).toEqual(reference)
    expect(exposedPersonMonths(stored, fixture.asOf)).toBe(exposedPersonMonths(reference, fixture.asOf))
    expect(stored.some((e) => e.rows.some((r) => r.startsWith("ExplanationOfBenefit/")) && e.adherence !== null)).toBe(true)
  })
})

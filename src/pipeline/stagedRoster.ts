/**
 * Phase one of the staging (Staging.ts): the patients and organizations every later fact is
 * resolved against. Their records are held until the phase ends, so a resource read more than once
 * is kept in its latest version (Versions.ts) and patients get their indexes in file order, which
 * makes the same export always give the same dataset.
 */
import type { StatementSync } from "node:sqlite"
import { formatDate } from "../health/calendar.ts"
import type { DataDays } from "./DataDays.ts"
import type { Fact } from "./facts.ts"
import type { Report } from "./Report.ts"
import type { ScratchRows } from "./scratchRows.ts"
import type { Origin } from "./stagingTables.ts"

type Held<F> = { readonly origin: Origin; readonly fact: F }

/** Orders held records as the files and lines they came from. */
const byOrigin = (a: { readonly origin: Origin }, b: { readonly origin: Origin }) => a.origin.file - b.origin.file || a.origin.line - b.origin.line

/** The organizations read: their names and regions, and the identifiers that name them. */
export class StagedOrganizations {
  private records: Array<Held<Extract<Fact, { k: "organization" }>>> = []
  readonly byId = new Map<string, { readonly name: string; readonly region: string }>()
  private readonly identifiers = new Map<string, string>()

  add(origin: Origin, fact: Extract<Fact, { k: "organization" }>): void {
    this.records.push({ origin, fact })
  }

  /** Ends phase one: the versions kept, in file order; the first organization an identifier names is the one it means. */
  close(isSuperseded: (origin: Origin) => boolean): void {
    for (const { origin, fact } of this.records.sort(byOrigin)) {
      if (isSuperseded(origin)) continue
      this.byId.set(fact.src, { name: fact.name, region: fact.region })
      for (const id of fact.identifiers) if (!this.identifiers.has(id)) this.identifiers.set(id, fact.src)
    }
    this.records = []
  }

  /** An organization reference (an id, or `?identifier`) → its id in the export, or null when it is not there. */
  of(ref: string | null): string | null {
    if (ref === null) return null
    if (ref.startsWith("?")) return this.identifiers.get(ref) ?? null
    return this.byId.has(ref) ? ref : null
  }
}

/** The patients read, and how a later fact's reference to one resolves. */
export class StagedPatients {
  private records: Array<Held<Extract<Fact, { k: "patient" }>>> = []
  private readonly index = new Map<string, number>()
  /** Ids and identifier keys of the patients left out (no birth date): what is about them is left out too, not a problem. */
  private readonly leftOut = new Set<string>()
  private lookup: StatementSync | undefined
  private readonly rows: ScratchRows
  private readonly report: Report
  /** fhir: references to `Patient`s in `Type.subject`; omop: `person_id`s of PERSON. */
  private readonly format: "fhir" | "omop"
  /** A row naming a person the dataset lacks is a problem (`--strict`), not a row left out and counted. */
  private readonly strict: boolean

  constructor(rows: ScratchRows, report: Report, format: "fhir" | "omop", strict: boolean) {
    this.rows = rows
    this.report = report
    this.format = format
    this.strict = strict
  }

  add(origin: Origin, fact: Extract<Fact, { k: "patient" }>): void {
    this.records.push({ origin, fact })
  }

  /** How many patients phase one kept. */
  get count(): number {
    return this.index.size
  }

  /**
   * Ends phase one: the versions kept get their indexes in file order and go to the staging
   * file; a patient id seen twice otherwise (OMOP: PERSON has no versions) is a problem, a patient
   * without a birth date is left out with all that is about them.
   */
  close(isSuperseded: (origin: Origin) => boolean): void {
    const first = new Map<string, Origin>()
    for (const { origin, fact } of this.records.sort(byOrigin)) {
      if (isSuperseded(origin)) continue
      const earlier = first.get(fact.src)
      if (earlier !== undefined) {
        // FHIR's were reported by `supersede` (versions that cannot be told apart).
        if (this.format === "omop") this.report.problem(origin.place, "person_id", `'${fact.src}' is also the id of the person at ${this.report.render(earlier.place)}`)
        continue
      }
      first.set(fact.src, origin)
      if (fact.birthYear === null) {
        this.report.note(`${origin.type} without a birth date: left out, with all that is about them (every cohort needs an age)`)
        this.leftOut.add(fact.src)
        for (const key of fact.identifiers) this.leftOut.add(key)
        continue
      }
      // Dates are judged against each other, not the calendar: a birth after the death is wrong in any era.
      if (fact.death !== null && fact.birthYear > Number(formatDate(fact.death).slice(0, 4))) {
        this.report.problem(origin.place, this.format === "omop" ? "year_of_birth" : "Patient.birthDate", `born in ${fact.birthYear}, after the death on ${formatDate(fact.death)}`)
        continue
      }
      const idx = this.index.size
      this.index.set(fact.src, idx)
      this.rows.run("patient", [idx, `${origin.type}/${fact.src}`, fact.birthYear, fact.sex, fact.region, fact.death])
      for (const key of fact.identifiers) this.rows.run("patient_identifier", [key, idx])
    }
    this.records = []
  }

  /** A patient reference (an id, or `?identifier`) → the patient's index, or undefined after reporting it. */
  of(ref: string, origin: Origin): number | undefined {
    const idx = ref.startsWith("?") ? this.byIdentifier(ref, origin) : this.index.get(ref)
    if (idx === null) return undefined
    if (idx === undefined && this.leftOut.has(ref)) {
      this.report.note(`${origin.type} about a patient left out: left out`)
      return undefined
    }
    const path = this.subject(origin)
    if (idx === undefined && this.strict) {
      this.report.problem(origin.place, path, this.format === "omop"
        ? `person ${ref} is not in the PERSON table`
        : `Patient ${ref.startsWith("?") ? `with identifier ${ref.slice(1)}` : ref} is not in the export`)
    } else if (idx === undefined) {
      // A foreign key to no person: the row is left out and counted (docs/data.md, "Rows about no one").
      this.report.orphan(this.format === "omop" ? `${origin.type}.${path}` : path)
    }
    return idx
  }

  /** The patient an identifier names; null (reported) when it names several. */
  private byIdentifier(ref: string, origin: Origin): number | undefined | null {
    this.lookup ??= this.rows.db.prepare("SELECT idx FROM patient_identifier WHERE key = ?")
    const rows = this.lookup.all(ref) as Array<{ readonly idx: number }>
    const ids = new Set(rows.map((r) => r.idx))
    if (ids.size <= 1) return rows[0]?.idx
    this.report.problem(origin.place, this.subject(origin), `the identifier ${ref.slice(1)} names ${ids.size} patients`)
    return null
  }

  /** Where a record names its patient, for messages. */
  private subject(origin: Origin): string {
    if (this.format === "omop") return "person_id"
    return origin.type === "AllergyIntolerance" || origin.type === "Device" ? `${origin.type}.patient` : `${origin.type}.subject`
  }
}

/** Phase one's facts: patients, organizations and the vocabulary entries the source declares. */
export class StagedRoster {
  readonly patients: StagedPatients
  readonly organizations = new StagedOrganizations()
  /** Vocabulary entries the source declares (FHIR CodeSystem resources of the service's vocabularies). */
  readonly seeds = new Map<string, { readonly label: string; readonly system: string | null; readonly standard: string | null }>()
  private readonly rows: ScratchRows
  private readonly days: DataDays

  constructor(rows: ScratchRows, report: Report, format: "fhir" | "omop", strict: boolean, days: DataDays) {
    this.rows = rows
    this.days = days
    this.patients = new StagedPatients(rows, report, format, strict)
  }

  /** Takes a phase-one fact (medications are kept by the reader); other facts are not phase one's. */
  add(origin: Origin, fact: Fact): void {
    if (fact.k === "patient") {
      this.patients.add(origin, fact)
      this.days.seen(fact.death)
    } else if (fact.k === "organization") {
      this.organizations.add(origin, fact)
    } else if (fact.k === "vocabulary") {
      this.seeds.set(`${fact.kind}|${fact.code}`, { label: fact.label, system: fact.system, standard: fact.standard })
    }
  }

  /** Ends phase one: the versions kept are the organizations and patients. */
  close(isSuperseded: (origin: Origin) => boolean): void {
    this.organizations.close(isSuperseded)
    this.patients.close(isSuperseded)
  }

  /** The regions of the patients and organizations read. */
  regions(): ReadonlySet<string> {
    const out = new Set((this.rows.db.prepare("SELECT DISTINCT region FROM patient").all() as Array<{ readonly region: string }>).map((r) => r.region))
    for (const o of this.organizations.byId.values()) out.add(o.region)
    return out
  }
}

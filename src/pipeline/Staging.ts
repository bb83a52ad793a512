/**
 * Where an import collects what it reads before anything reaches the service's database: a
 * scratch SQLite file beside it (journal off; deleted at the end, and by the next import if a
 * kill left it behind). Facts arrive in any order (files are read on several threads); every row
 * keeps the file and line it came from, and ids are given in that order at the end, so the same
 * export always gives the same dataset. A resource read more than once (an incremental export
 * beside the one it updates) is kept in its latest version (Versions.ts). Memory holds only what
 * references are resolved against (patient ids, organizations, medications, concepts): the rest is
 * on disk, so memory does not grow with the size of the files. The tables: stagingTables.ts.
 *
 * StagedDataset.ts then turns the staged facts (`facts()`) into the dataset's tables.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite"
import { formatDate } from "../health/calendar.ts"
import { DataDays } from "./DataDays.ts"
import { StagedConcepts } from "./StagedConcepts.ts"
import { AXES } from "../plugin/axes.ts"
import { rmSync } from "node:fs"
import type { DeviceEvent, Fact } from "./facts.ts"
import type { Report } from "./Report.ts"
import { type Origin, PHASE_TWO_TABLES, type StagedFacts, STAGING_TABLES } from "./stagingTables.ts"

export type { StagedFacts }
import { Versions } from "./Versions.ts"

/** Staged rows per transaction of the scratch file. */
const ROWS_PER_COMMIT = 50_000

interface PatientRecord {
  readonly origin: Origin
  readonly fact: Extract<Fact, { k: "patient" }>
}

/** The scratch store of one import. */
export class Staging {
  private readonly db: DatabaseSync
  private readonly insert = new Map<string, StatementSync>()
  private pending = 0
  /** Phase one's patients, until their ids are given in file order. */
  private patientRecords: Array<PatientRecord> = []
  private readonly patientIndex = new Map<string, number>()
  /** Ids and identifier keys of the patients left out (no birth date): what is about them is left out too, not a problem. */
  private readonly leftOut = new Set<string>()
  private readonly organizations = new Map<string, { readonly name: string; readonly region: string }>()
  private readonly orgIdentifiers = new Map<string, string>()
  /** Vocabulary entries the source declares (FHIR CodeSystem resources of the service's vocabularies). */
  readonly seeds = new Map<string, { readonly label: string; readonly system: string | null; readonly standard: string | null }>()
  private readonly concepts = new StagedConcepts()
  /** The latest day of phase one's kept records. */
  private phaseOneDay = Number.NEGATIVE_INFINITY
  /** Phase one's organizations, until duplicates are resolved. */
  private organizationRecords: Array<{ readonly origin: Origin; readonly fact: Extract<Fact, { k: "organization" }> }> = []
  /** The resources read, for keeping the latest version of each. */
  private readonly versions: Versions
  /** The day of the import. */
  readonly today: number
  /** The days the data holds, for its as_of (DataDays.ts). */
  private readonly days: DataDays
  private patientLookup: StatementSync | undefined

  readonly path: string
  private readonly report: Report
  /** fhir: references to `Patient`s in `Type.subject`; omop: `person_id`s of PERSON. */
  private readonly format: "fhir" | "omop"
  /** A row naming a person the dataset lacks is a problem (`--strict`), not a row left out and counted. */
  readonly strict: boolean

  /**
   * `today`: the day of the import. A date after it (a mistyped year, an ETL's end of time such as
   * 2099-12-31) never becomes the dataset's as_of; such dates are counted. `strict`: a row naming a
   * person the dataset lacks is a problem.
   */
  constructor(path: string, report: Report, format: "fhir" | "omop", today: number, strict = false) {
    this.path = path
    this.report = report
    this.format = format
    this.today = today
    this.days = new DataDays(today)
    this.strict = strict
    rmSync(path, { force: true })
    this.db = new DatabaseSync(path)
    this.db.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -65536;
      ${STAGING_TABLES}
      BEGIN`)
    this.versions = new Versions(this.db, report, (values) => this.run("record", values))
  }

  private run(table: string, values: ReadonlyArray<string | number | null>): void {
    let st = this.insert.get(table)
    if (st === undefined) {
      st = this.db.prepare(`INSERT INTO ${table} VALUES (${values.map(() => "?").join(", ")})`)
      this.insert.set(table, st)
    }
    st.run(...values)
    if (++this.pending >= ROWS_PER_COMMIT) {
      this.db.exec("COMMIT; BEGIN")
      this.pending = 0
    }
  }

  /** Whether the data lies after the day of the import (DataDays.ts): its own dates then say when its present is. */
  get shifted(): boolean {
    return this.days.shifted
  }

  /**
   * A resource read, after its facts (`add`): its type and id, its `meta.lastUpdated` (epoch ms or
   * null) and the latest day its facts hold. Records sharing type and id are resolved when the
   * phase ends (Versions.ts).
   */
  record(origin: Origin, id: string, updated: number | null): void {
    this.versions.add(origin, id, updated, this.days.takeRecordDay())
  }

  /** The latest day of the records kept once records read more than once are resolved, with phase one's. */
  private latestKept(): number {
    return Math.max(this.phaseOneDay, this.versions.latestKept())
  }

  /** Inserts a phase-two fact's row, led by its record's origin. */
  private row(table: string, origin: Origin, values: ReadonlyArray<string | number | null>): void {
    this.run(table, [origin.file, origin.line, ...values])
  }

  /** A patient reference → the patient's index, or undefined after reporting it. */
  private patientOf(ref: string, origin: Origin, path: string): number | undefined {
    let idx: number | undefined
    if (ref.startsWith("?")) {
      this.patientLookup ??= this.db.prepare("SELECT idx FROM patient_identifier WHERE key = ?")
      const rows = this.patientLookup.all(ref) as Array<{ readonly idx: number }>
      const ids = new Set(rows.map((r) => r.idx))
      if (ids.size > 1) {
        this.report.problem(origin.place, path, `the identifier ${ref.slice(1)} names ${ids.size} patients`)
        return undefined
      }
      idx = rows[0]?.idx
    } else {
      idx = this.patientIndex.get(ref)
    }
    if (idx === undefined && this.leftOut.has(ref)) {
      this.report.note(`${origin.type} about a patient left out: left out`)
      return undefined
    }
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

  /** An organization reference → its id in the export, or null when it is not there. */
  organizationOf(ref: string | null): string | null {
    if (ref === null) return null
    if (ref.startsWith("?")) return this.orgIdentifiers.get(ref) ?? null
    return this.organizations.has(ref) ? ref : null
  }

  /** Phase one: patients, organizations and vocabulary entries (medications are kept by the reader). */
  addPhaseOne(origin: Origin, fact: Fact): void {
    switch (fact.k) {
      case "patient":
        this.patientRecords.push({ origin, fact })
        this.days.seen(fact.death)
        return
      case "organization":
        this.organizationRecords.push({ origin, fact })
        return
      case "vocabulary":
        this.seeds.set(`${fact.kind}|${fact.code}`, { label: fact.label, system: fact.system, standard: fact.standard })
        return
      default:
        return
    }
  }

  /**
   * Ends phase one: of a resource read more than once its latest version is kept (Versions.ts);
   * patients get their indexes in file order; a patient id seen twice otherwise (OMOP: PERSON has
   * no versions) is a problem. Returns whether a record at an origin was superseded (the reader
   * keeps Medications itself).
   */
  closePhaseOne(): (origin: Origin) => boolean {
    const superseded = this.versions.supersede()
    const left = superseded === 0 ? new Set<string>() : this.versions.supersededOrigins()
    const isSuperseded = (origin: Origin) => left.has(`${origin.file}:${origin.line}`)
    const byOrigin = (a: { readonly origin: Origin }, b: { readonly origin: Origin }) => a.origin.file - b.origin.file || a.origin.line - b.origin.line
    for (const { origin, fact } of this.organizationRecords.sort(byOrigin)) {
      if (isSuperseded(origin)) continue
      this.organizations.set(fact.src, { name: fact.name, region: fact.region })
      for (const id of fact.identifiers) if (!this.orgIdentifiers.has(id)) this.orgIdentifiers.set(id, fact.src)
    }
    this.organizationRecords = []
    this.patientRecords.sort(byOrigin)
    const first = new Map<string, Origin>()
    if (superseded > 0) this.days.latest = this.latestKept()
    this.phaseOneDay = this.days.latest
    for (const { origin, fact } of this.patientRecords) {
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
      const idx = this.patientIndex.size
      this.patientIndex.set(fact.src, idx)
      this.run("patient", [idx, `${origin.type}/${fact.src}`, fact.birthYear, fact.sex, fact.region, fact.death])
      for (const key of fact.identifiers) this.run("patient_identifier", [key, idx])
    }
    this.patientRecords = []
    this.versions.clear()
    this.db.exec("COMMIT; CREATE INDEX patient_identifier_key ON patient_identifier (key); BEGIN")
    this.pending = 0
    return isSuperseded
  }

  /** The regions of the patients and organizations read. */
  regions(): ReadonlySet<string> {
    const out = new Set((this.db.prepare("SELECT DISTINCT region FROM patient").all() as Array<{ readonly region: string }>).map((r) => r.region))
    for (const o of this.organizations.values()) out.add(o.region)
    return out
  }

  /** How many patients phase one found. */
  get patients(): number {
    return this.patientIndex.size
  }

  /** Where a record names its patient, for messages. */
  private subject(origin: Origin): string {
    if (this.format === "omop") return "person_id"
    return origin.type === "AllergyIntolerance" || origin.type === "Device" ? `${origin.type}.patient` : `${origin.type}.subject`
  }

  /** Phase two: one fact of a record. */
  add(origin: Origin, fact: Fact): void {
    const src = (id: string) => `${origin.type}/${id}`
    switch (fact.k) {
      case "condition": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.day)
        this.row("condition", origin, [p, this.concepts.idOf("condition", fact.concept)])
        if (fact.day !== null) this.events(origin, p, fact.events, fact.day)
        return
      }
      case "encounter": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.end ?? fact.start, false)
        this.days.event(fact.start)
        this.row("encounter", origin, [fact.src, origin.type, p, fact.kind, fact.cls, fact.start, fact.end, fact.org])
        return
      }
      case "course": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.start)
        this.row("course", origin, [src(fact.src), origin.type, p, this.concepts.idOf("drug", fact.drug), fact.start, fact.end, fact.adherence])
        return
      }
      case "course_detail":
        this.row("course_detail", origin, [fact.course, fact.adherence, fact.ongoing ? 1 : 0])
        return
      case "dispense": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.day)
        this.row("dispense", origin, [src(fact.src), p, this.concepts.idOf("drug", fact.drug), fact.day, fact.days, fact.end])
        return
      }
      case "adverse": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.day)
        this.row("adverse", origin, [src(fact.src), origin.type, p, this.concepts.idOf("drug", fact.drug), this.concepts.idOf("adverse_event", fact.event), fact.day])
        return
      }
      case "procedure": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.day)
        this.events(origin, p, fact.events, fact.day)
        if (fact.device !== null || fact.deviceRefs.length > 0) {
          this.row("procedure", origin, [fact.src, origin.type, p, fact.device, JSON.stringify(fact.deviceRefs), fact.day, fact.org, fact.encounter])
        }
        return
      }
      case "device": {
        const p = fact.patient === null ? null : this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.row("device", origin, [fact.src, p, fact.device])
        return
      }
      case "scores": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.day)
        const values: Array<number | null> = [p, fact.month, fact.direct ? 1 : 0, fact.ages?.from ?? null, fact.ages?.below ?? null]
        for (let a = 0; a < AXES.length; a++) values.push(fact.counts[a]! > 0 ? fact.sums[a]! : null, fact.counts[a]!)
        this.row("scores", origin, values)
        return
      }
      case "outcome":
        this.row("outcome", origin, [fact.implant, fact.metric, fact.value])
        return
      case "source_era": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.row("source_era", origin, [fact.table, p, this.concepts.idOf(fact.table === "drug_era" ? "drug" : "condition", fact.concept, true), fact.start, fact.end])
        return
      }
      case "observed": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.days.seen(fact.end, false)
        this.row("observed", origin, [p, fact.start, fact.end])
        return
      }
      default:
        this.addPhaseOne(origin, fact)
    }
  }

  private events(origin: Origin, patient: number, events: ReadonlyArray<DeviceEvent>, day: number): void {
    for (const e of events) this.row("device_event", origin, [patient, e.metric, e.devices.join(","), day])
  }

  /** The latest day in the data (as_of unless given), or undefined when there is none (DataDays.present). */
  get latestDay(): number | undefined {
    return this.days.present
  }

  /** Ends the writes: everything is on disk and indexed for the reads of `rows()`. */
  closePhaseTwo(): void {
    if (this.versions.supersede() > 0) {
      for (const [table] of PHASE_TWO_TABLES) this.db.exec(`DELETE FROM ${table} WHERE (f, l) IN (SELECT f, l FROM superseded)`)
      this.days.latest = this.latestKept()
    }
    this.days.report(this.report)
    this.db.exec(`COMMIT;
      CREATE INDEX encounter_src ON encounter (src);
      CREATE INDEX course_detail_course ON course_detail (course);
      CREATE INDEX device_event_patient ON device_event (patient, day);
      CREATE INDEX outcome_implant ON outcome (implant);
      CREATE INDEX observed_patient ON observed (patient, finish);
      CREATE INDEX source_era_patient ON source_era (tbl, patient)`)
  }

  /** Deletes the scratch file. */
  close(): void {
    if (this.db.isOpen) this.db.close()
    for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(this.path + suffix, { force: true })
  }

  /** What the staged facts are, for turning them into the dataset's tables (StagedDataset.ts). */
  facts(): StagedFacts {
    return {
      db: this.db,
      report: this.report,
      format: this.format,
      patients: this.patients,
      latestDay: this.latestDay,
      seeds: this.seeds,
      concepts: this.concepts.list,
      comparedOnly: this.concepts.comparedOnly,
      organizations: this.organizations,
      organizationOf: (ref) => this.organizationOf(ref)
    }
  }
}
